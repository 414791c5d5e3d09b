"""Load tests: workload, arrivals, client, server metrics, metric formulas, the result file."""
