"""Exercise mode; scripts/exercises.py is its command line.

    markers.py    the regions marked in the sources: parsing, stubbing, secrets
    manifest.py   exercises/manifest.json, the tree's files and their agreement
    runner.py     building a tree and running its ctest entries and Criterion tests
    tree.py       make: the student tree and its leak check
    grade.py      grade: the table and the JSON of a tree's exercises
    check.py      check: each stub fails its own tests and nothing else
    selftest.py   selftest: all of the above proved on this tree
"""
