

empty_file.protobproto3