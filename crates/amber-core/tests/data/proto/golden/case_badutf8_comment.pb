
$
badutf8_comment.proto"
Mbproto3