"""The no-cycle rule as an import-linter contract (`lint-imports`, `[tool.importlinter]` in
pyproject.toml): no module of the project's packages is in an import cycle, counting the imports
inside functions (grimp reads every import statement of a module, wherever it stands). Imports
under `if TYPE_CHECKING:` are left out: they are annotations, not dependencies at run time, so the
contract builds its own graph without them. It lives in the test tree because it is a check, not
part of the product (import-linter and grimp are test tools)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def strongly_connected(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module (or a module importing itself), each
    sorted; iterative, so a deep chain of imports cannot exhaust the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return found


def cycles_shown(packages: list[str]) -> list[str]:
    """Each cycle among the packages' modules: its members, then one import line per edge."""
    graph = grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)
    edges = {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    shown = []
    for cycle in strongly_connected(edges):
        lines = [
            f"  {importer} -> {imported} (line {detail['line_number']})"
            for importer in cycle
            for imported in sorted(edges[importer] & set(cycle))
            for detail in graph.get_import_details(importer=importer, imported=imported)[:1]
        ]
        shown.append("\n".join([", ".join(cycle), *lines]))
    return shown


class AcyclicContract(Contract):
    """type = "acyclic"; packages: the packages whose modules may form no cycle."""

    type_name = "acyclic"
    packages: Any = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        shown = cycles_shown(list(self.packages))
        return ContractCheck(kept=not shown, metadata={"cycles": shown})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for text in check.metadata["cycles"]:
            output.print_error(text, bold=False)
            output.new_line()
