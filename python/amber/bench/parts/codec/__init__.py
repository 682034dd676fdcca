"""The codec part: `amber.dumps/loads` against the object codecs users pick today.

`contenders` registers the part and its codecs (pickle protocol 5 is the baseline), `workloads`
defines W1, W2 and W3, and `objects` and `scaling` are its studies.
"""

from amber.bench.parts.codec import contenders, objects, scaling

__all__ = ["contenders", "objects", "scaling"]
