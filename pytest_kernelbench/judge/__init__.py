"""The judge: a case's stages (compile, correct, speed, attribute, profile) and the rules they
apply. It never imports pytest."""
