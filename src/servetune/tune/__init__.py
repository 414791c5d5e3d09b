"""`tune`: find the serve flags that carry the most users within latency targets.

trial (one configuration measured on one server start), capacity (grow, then bisect the
closed-loop concurrency under the SLOs), limit (which limit held it back, from /metrics),
knobs (the flags tune moves and their candidate values), search (the seed's decision logic,
one knob per step), parallel (several trials at once through an executor), output (tune.json
and the next step), sentence (what tune says, as text keys). The summary and report.html are
views in `servetune.render.tune` and `servetune.render.tune_report`.
"""
