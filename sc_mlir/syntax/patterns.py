"""Regular-expression pieces for MLIR names, spelled once (MLIR's LangRef: an SSA value is
`%` followed by a suffix-id of letters, digits and `$._-`; a result of a multi-result op
is written `%name:N` where it is defined, `%name#N` where it is used).

>>> import re
>>> bool(re.fullmatch(SSA_NAME, "%alloca_3")), bool(re.fullmatch(SSA_RESULTS, "%0:2"))
(True, True)
"""

SSA_NAME = r"%[\w$.\-]+"
SSA_RESULTS = SSA_NAME + r"(?::\d+)?"  # a definition's result group: `%0:2`
