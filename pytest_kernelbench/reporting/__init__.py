"""What a run says: records as they settle, the JSON report, fast_p and its tables, feedback files,
progress, resume and the kernelbench-report CLI."""
