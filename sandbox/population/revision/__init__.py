"""How agents revise their norms: rewritten texts (`texts`: the norm book, Fermi imitation, selection, reflection,
mutation) and principles (`principles`)."""
