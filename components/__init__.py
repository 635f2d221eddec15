"""Pulumi component resources. Each file models one concept; rendering lives in components/render."""
