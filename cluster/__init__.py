"""What a Kubernetes cluster offers, read not assumed: facts (from a live read or `kubectl get -o json`
snapshots), provider profiles, GPU node selectors, and pure checks over the facts. Never imports pulumi."""
