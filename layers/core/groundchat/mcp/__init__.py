"""Our tools for MCP hosts: the calls (permission, charge, trace), the SDK's server over them, and
the protected-resource metadata hosts discover the sign-in from."""
