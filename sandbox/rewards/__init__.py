"""Rewards shared by the methods that train or judge: intrinsic rewards of the moral paper (`intrinsic`), the LLM
judge and its answer parsers (`judge`, `parse`), ground-truth objectives (`objectives`), the zero-shot matrix task
(`matrix_task`) and the judge's verdicts as a training reward table (`proxy`).

Moral fine-tuning, the proxy method and distillation import them from here; no method imports another's rewards.
"""
