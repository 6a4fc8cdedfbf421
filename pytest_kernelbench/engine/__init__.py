"""What runs a batch of cases, pytest or not: the judging of one case, the processes that judge
many at once, the order they go in, and the builds ahead of them. Nothing here knows pytest."""
