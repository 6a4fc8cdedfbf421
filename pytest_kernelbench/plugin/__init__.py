"""The pytest face: hooks, options, items and xdist scheduling. The only package that imports
pytest."""
