"""How `pulumi up` moves a Job from its old inputs to its new ones, by the provider's and the engine's rules."""

from __future__ import annotations

from typing import Any


def replacement(old: dict[str, Any], new: dict[str, Any], option: bool | None) -> str | None:
    """How `pulumi up` moves from the old Job to the new one. A change to `.spec.template` forces a replacement
    (pulumi/pulumi-kubernetes provider/pkg/provider/diff.go@cafe8c4ac4de156415093291bffc63b6e1c97d1e, `var job`);
    the provider deletes first when the name stays (provider/pkg/provider/provider.go@010f5d8e95e3cc9a384442e8239310d51fdc052e,
    Diff); a delete_before_replace option, when set, overrides it (pulumi/pulumi
    pkg/resource/deploy/step_generator.go@1a16857a44f16e46a9dce29f184c511062a70f80). None: no replacement."""
    same_name = old["metadata"]["name"] == new["metadata"]["name"]
    if same_name and old["spec"]["template"] == new["spec"]["template"]:
        return None
    delete_first = same_name if option is None else option
    return "delete-first" if delete_first else "create-first"
