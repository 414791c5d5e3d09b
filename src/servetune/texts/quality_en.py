"""What `quality` says, in English."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "header": "Answer quality: {dataset}, {n} questions asked of both servers",
    "side.before": "before",
    "side.after": "after",
    "side.line": (
        "{accuracy} right: {correct} of {answered} answered questions ({errors} failed requests)"
    ),
    "accuracy.none": "no answers",
    "difference": (
        "After minus before: {difference} points (95% interval {low} to {high}); the two agree "
        "on {agreement} of the questions."
    ),
    "difference.none": "No question was answered by both servers, so nothing can be compared.",
    "verdict.no-detectable-loss": (
        "VERDICT no-detectable-loss: the change costs at most {tolerance} points of accuracy on "
        "this sample (the interval's lower end is above -{tolerance}). If the throughput gain is "
        "worth it, keep it."
    ),
    "verdict.better": (
        "VERDICT better: the after server answers more questions right, beyond the noise."
    ),
    "verdict.worse": (
        "VERDICT worse: the after server answers fewer questions right, beyond the noise. For "
        "math, code and careful reasoning this is the accuracy a quantization can cost: keep the "
        "original checkpoint, or try a gentler quantization (8-bit, FP8) and measure again."
    ),
    "verdict.insufficient-data": (
        "VERDICT insufficient-data: the interval still reaches below -{tolerance} points, so a "
        "loss larger than you accept cannot be ruled out."
    ),
    "settle": "About {count} questions in all would settle it at the differences seen so far.",
    "differing.header": "Questions where one is right and the other wrong ({count}):",
    "differing.answer": "expected {answer}",
    "differing.before": "before: {reply}",
    "differing.after": "after:  {reply}",
    "differing.more": "... and {count} more (all of them in --output or --format json)",
    "failed": (
        "{count} questions had a failed request ({kinds}); they count as errors, not as wrong "
        "answers."
    ),
    "interrupted": "Interrupted: the numbers cover the questions answered before Ctrl-C.",
    "progress": "asked {done}/{total}",
    "warning.low-accuracy": (
        "WARNING: neither server gets more than 10% of the questions right, so the two agreeing "
        "says little about what the change costs: ask questions the original model can answer."
    ),
}
