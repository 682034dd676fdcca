"""One module per study; each registers a `Study` subclass with `@register_study` on import."""
