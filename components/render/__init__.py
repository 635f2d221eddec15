"""Pure functions that build Kubernetes and Docker objects from typed config. No pulumi imports."""
