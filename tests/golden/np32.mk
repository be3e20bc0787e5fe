## np32.mk: (the helper describes what it ported here), included by golden.mk.
GOLDEN_TESTS +=
## what shardrepl does not do yet (golden-pending)
GOLDEN_PENDING +=
