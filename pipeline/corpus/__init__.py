"""The stages that need every source at once: ``noise`` (boilerplate that recurs
across the corpus), ``clean`` (the text of each element), ``dedupe`` (an element
repeating an earlier one points at it), and ``xrefs`` (the cross-references a
cleaned text makes, which every later stage reads)."""
