"""The pipeline (docs/design.md §2, "The pipeline"): suite -> sample -> measure -> judge -> report.

`run` samples live, `score` reads samples files and shard reports, `changed` picks what a change can
have affected; all of them end in `evaluate.evaluate`, which returns the `Report` that
`stabilitygate.api` hands its callers.
"""
