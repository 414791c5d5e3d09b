"""`python -m servetune`: the same command line as the `servetune` script."""

from servetune.cli.main import main

raise SystemExit(main())
