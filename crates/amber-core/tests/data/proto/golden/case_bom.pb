

	bom.proto"
Mbproto3