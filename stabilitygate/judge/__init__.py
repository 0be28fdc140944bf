"""Judging: thresholds, the baseline and its statistics, each case's verdict, the gate's exit code."""
