"""`tune`: find the serve flags that carry the most users within latency targets.

trial (one configuration measured on one server start), capacity (grow, then bisect the
closed-loop concurrency under the SLOs), limit (which limit held it back, from /metrics),
knobs (the flags tune moves and their candidate values), search (the seed's decision logic,
one knob per step), output (tune.json and the terminal summary), report (report.html).
"""
