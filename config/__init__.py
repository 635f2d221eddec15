"""The typed stack config: the schema, parsed once at the edge into frozen models (config/stack.py StackConfig).

The rules between keys live in validation/. Never imports pulumi.
"""
