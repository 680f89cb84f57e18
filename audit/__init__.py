"""Instruments that measure the world's honesty, above what they measure (the server imports
none of them): the leak audit (`leak_audit`: can one tool's output decide a case?), the same
audit on the adversarial split's cases (`adversarial`), and the surface probes
(`surface_probes`: policies that decide from what a memoriser or a one-view classifier learns,
registered by name in `memex.adapter.POLICIES`)."""
