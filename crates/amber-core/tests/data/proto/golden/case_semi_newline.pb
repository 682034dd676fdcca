
!
semi_newline.proto"
Mbproto3