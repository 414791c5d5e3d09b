"""Review a serve command: model facts, hardware, the memory estimate, rules, check, explain."""
