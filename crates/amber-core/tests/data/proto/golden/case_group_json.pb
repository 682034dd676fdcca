
—
group_json.proto"‚
M$
mygroup (
2
.M.MyGroupRmygroup/
other_thing (
2.M.Other_ThingR
otherThing
MyGroup
a (Ra
Other_Thing