"""The problem suite: finding problems and candidates, importing their files, the manifest and its
audit, precision and the correctness rules."""
