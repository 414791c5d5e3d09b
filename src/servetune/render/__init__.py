"""Terminal and JSON views of results, and tune's HTML report: the one place that says a
result in a language (`texts.Voice(area, language)`) and lays it out.

check (check's report), doctor, bench (the live line and the final table), judge (compare and
accept), plan, quality, serve (its status lines and JSON events), tune (the summary) and
tune_report (report.html). A result's JSON document is its own `to_json()`, in English.
"""
