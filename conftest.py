# The problem and candidate folders hold benchmark modules, not tests.
collect_ignore = ["problems", "candidates", "reports", "tests/examples"]

pytest_plugins = ["pytester"]
