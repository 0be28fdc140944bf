"""The pipeline of DESIGN section 9: suite -> sample -> measure -> judge -> report.

`run.run_suite` samples live; `score.score_samples` and `score.merge_reports` start from samples
files; all three end in `evaluate.evaluate`.
"""
