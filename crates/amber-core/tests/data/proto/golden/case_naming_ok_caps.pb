
-
naming_ok_caps.proto"
FooBARbeditionspé