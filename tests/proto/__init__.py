"""amber.proto: message classes, the wire format, ProtoJSON, the text format, descriptors and stubs."""
