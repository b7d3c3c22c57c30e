"""The common base of the readers' error classes."""


class FormatError(ValueError):
    """A malformed file; each reader raises its own subclass (`GltfError`,
    `BvhError`...), whose message names the file and where it is wrong."""
