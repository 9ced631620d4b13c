"""Refinement of samples (UltraTool section 2.4, MTU-Bench calibration) as a workflow: an
annotator's draft, saved at every edit; the answer it becomes (the refined sample, with the
verdict); a reviewer's approval, after which the refined sample is the sample's new revision.

The editing itself is pure (annotation.draft_editing). A draft has a mode fixed by the sample's
gold: "plan" (a tree of steps: UltraTool), "calls" (gold tool calls: MTU-Bench, generic samples),
"acceptable" (calls whose arguments are lists of acceptable values: BFCL's single-turn possible
answers), "turns" (call strings per turn: BFCL's multi-turn ground truth; annotation.draft_lists)
or "json" (any other gold, edited as JSON text). The query text can be edited in every mode but
"acceptable" and "turns", whose samples keep the question the model sees elsewhere (BFCL's
input["question"]; input["query"] only lists it).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from annotation import draft_editing, draft_lists
from annotation.assign import AnnotationError
from annotation.models import Assignment, Campaign, Label, RefinementDraft, Review
from annotation.selectors import campaign_labels_counted
from benchmarks.kit.registry import GoldEditing, gold_editing
from benchmarks.models import Sample, Tool
from benchmarks.selectors import gold_outline
from benchmarks.services import RevisionConflict, sample_revise, samples_annotate

# --- drafts -------------------------------------------------------------------------------------


LIST_MODES = ("acceptable", "turns")


def _list_gold(reference: Any) -> GoldEditing | None:
    """The suite's gold editing of an "acceptable" or "turns" gold (None for the others)."""
    gold = gold_editing(reference)
    return gold if gold is not None and gold.shape in LIST_MODES else None


def draft_mode(reference: Any) -> str:
    gold = _list_gold(reference)
    if gold is not None:
        return gold.shape
    if isinstance(reference, dict) and isinstance(reference.get("steps"), list):
        return "plan"
    if isinstance(reference, dict) and (
        isinstance(reference.get("calls"), list) or isinstance(reference.get("tool_calls"), list)
    ):
        return "calls"
    return "json"


def toolset(sample: Sample) -> dict[str, dict[str, Any]]:
    """name -> arguments schema of the tools the sample offers (its own definitions first:
    an MTU-Bench sample carries its own, and a name may have several across samples); a
    suite whose samples keep their functions in their input says where (GoldEditing.functions:
    BFCL's input["functions"])."""
    schemas: dict[str, dict[str, Any]] = {}
    gold = gold_editing(sample.reference)
    if gold is not None and gold.functions is not None and isinstance(sample.input, dict):
        schemas.update(gold.functions(sample.input))
    own = sample.input.get("tools") if isinstance(sample.input, dict) else None
    for tool in own or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            schemas.setdefault(tool["name"], tool.get("parameters") or {})
    names = [n for n in sample.candidate_tools or [] if n not in schemas]
    for name, parameters in Tool.objects.filter(
        benchmark_id=sample.benchmark_id, name__in=names
    ).values_list("name", "parameters"):
        schemas.setdefault(name, parameters or {})
    return schemas


def _initial(sample: Sample) -> dict[str, Any]:
    reference = sample.reference
    mode = draft_mode(reference)
    data: dict[str, Any] = {
        "base_revision": sample.revision,
        "mode": mode,
        "query": sample.input.get("query") if isinstance(sample.input, dict) else None,
        "form_errors": {},
    }
    if mode == "plan":
        data["steps"] = draft_editing.steps_dump(draft_editing.plan_from_reference(reference))
    elif mode == "acceptable":
        data["query"] = None
        data["calls"] = draft_editing.calls_dump(
            draft_lists.acceptable_from_reference(_gold(reference), reference)
        )
    elif mode == "turns":
        data["query"] = None
        calls, data["turn_count"] = draft_lists.turns_from_reference(_gold(reference), reference)
        data["turns"] = draft_lists.turns_dump(calls)
    elif mode == "calls":
        data["calls"] = draft_editing.calls_dump(draft_editing.calls_from_reference(reference))
    else:
        data["json"] = json.dumps(reference, ensure_ascii=False, indent=2)
    return data


def draft_get(assignment: Assignment) -> RefinementDraft:
    draft, _ = RefinementDraft.objects.get_or_create(
        assignment=assignment, defaults={"data": _initial(assignment.item.sample)}
    )
    return draft


def _gold(reference: Any) -> GoldEditing:
    gold = _list_gold(reference)
    if gold is None:
        raise AnnotationError("this sample's gold is no longer of the draft's shape (reload)")
    return gold


def _original(sample: Sample, mode: str) -> Any:
    if mode == "acceptable":
        return draft_lists.acceptable_from_reference(_gold(sample.reference), sample.reference)
    if mode == "turns":
        return draft_lists.turns_from_reference(_gold(sample.reference), sample.reference)[0]
    if mode == "plan":
        return draft_editing.plan_from_reference(sample.reference)
    if mode == "calls":
        return draft_editing.calls_from_reference(sample.reference)
    return sample.reference


STEP_OPS = {"insert", "delete", "up", "down", "indent", "outdent", "text", "tool", "arguments"}


def draft_apply(*, assignment: Assignment, op: str, params: dict[str, Any]) -> RefinementDraft:
    """Apply one edit to the annotator's draft and save it (autosave). Raises AnnotationError
    for an edit that cannot apply (an unknown step, an impossible move)."""
    if assignment.status != Assignment.Status.LEASED:
        raise AnnotationError("this item is no longer yours to edit")
    with transaction.atomic():
        draft = RefinementDraft.objects.select_for_update().get(pk=draft_get(assignment).pk)
        data = dict(draft.data)
        data["form_errors"] = dict(data.get("form_errors") or {})
        sample = assignment.item.sample
        try:
            if op == "query" and data["mode"] in LIST_MODES:
                raise AnnotationError("this sample's question is not edited here")
            if op == "query":
                data["query"] = str(params.get("value", ""))[:20000]
            elif op == "json":
                data["json"] = str(params.get("value", ""))
            elif data["mode"] == "acceptable":
                data["calls"] = draft_editing.calls_dump(
                    _acceptable_op(draft_editing.calls_load(data["calls"]), op, params, data)
                )
            elif data["mode"] == "turns":
                data["turns"] = draft_lists.turns_dump(
                    _turns_op(draft_lists.turns_load(data["turns"]), op, params, data)
                )
            elif data["mode"] == "plan":
                data["steps"] = draft_editing.steps_dump(
                    _plan_op(draft_editing.steps_load(data["steps"]), op, params, data, sample)
                )
            elif data["mode"] == "calls":
                data["calls"] = draft_editing.calls_dump(
                    _call_op(draft_editing.calls_load(data["calls"]), op, params, data, sample)
                )
            else:
                raise AnnotationError(f"unknown edit {op!r}")
        except draft_editing.RefineError as exc:
            raise AnnotationError(str(exc)) from None
        draft.data = data
        draft.save(update_fields=["data", "updated_at"])
    return draft


def _acceptable_op(
    calls: list[draft_editing.Call], op: str, params: dict[str, Any], data: dict
) -> list[draft_editing.Call]:
    """One edit of an acceptable-value draft: insert, delete, up, down, tool (the function),
    values (an argument's list as JSON text; blank removes the argument), add_value (one value:
    JSON, or the text itself), remove_value (by index), optional (toggles "" in the list). A
    value list that is not JSON is kept as typed, with its error, until it is fixed."""
    uid = str(params.get("uid") or "") or None
    if op == "insert":
        return draft_editing.call_insert(calls, uid)
    if uid is None:
        raise AnnotationError("which call?")
    argument = str(params.get("argument") or "")[:200]
    value = str(params.get("value", ""))[:20000]
    errors = data["form_errors"]
    if op == "delete":
        errors.pop(uid, None)
        return draft_editing.call_delete(calls, uid)
    if op in ("up", "down"):
        return draft_editing.call_move(calls, uid, op)
    if op == "tool":
        errors.pop(uid, None)
        return draft_editing.call_set(calls, uid, name=value, arguments={})
    if op == "values":
        try:
            values = draft_lists.values_from_text(value)
        except draft_editing.RefineError as exc:
            errors.setdefault(uid, {"errors": {}, "values": {}})
            errors[uid]["errors"][argument] = str(exc)
            errors[uid]["values"][argument] = value
            return calls
        _clear_form_error(errors, uid, argument)
        return draft_lists.set_values(calls, uid, argument, values)
    if op == "add_value":
        _clear_form_error(errors, uid, argument)
        return draft_lists.add_value(calls, uid, argument, draft_lists.value_from_text(value))
    if op == "remove_value":
        try:
            index = int(value)
        except ValueError:
            raise AnnotationError("which value?") from None
        _clear_form_error(errors, uid, argument)
        return draft_lists.remove_value(calls, uid, argument, index)
    if op == "optional":
        _clear_form_error(errors, uid, argument)
        return draft_lists.toggle_optional(calls, uid, argument)
    raise AnnotationError(f"unknown edit {op!r}")


def _clear_form_error(errors: dict[str, Any], uid: str, argument: str) -> None:
    mine = errors.get(uid)
    if isinstance(mine, dict):
        mine.get("errors", {}).pop(argument, None)
        mine.get("values", {}).pop(argument, None)
        if not mine.get("errors"):
            errors.pop(uid, None)


def _turns_op(
    calls: list[draft_lists.TurnCall], op: str, params: dict[str, Any], data: dict
) -> list[draft_lists.TurnCall]:
    """One edit of a turns draft: insert (in "turn", 0-based, after uid or first), delete, up,
    down (within its turn), call (the call string; checked when the draft is shown)."""
    uid = str(params.get("uid") or "") or None
    turn_count = int(data.get("turn_count") or 0)
    if op == "insert":
        try:
            turn = int(str(params.get("turn", "")))
        except ValueError:
            raise AnnotationError("which turn?") from None
        return draft_lists.turn_insert(calls, turn, uid, turn_count)
    if uid is None:
        raise AnnotationError("which call?")
    if op == "delete":
        return draft_lists.turn_delete(calls, uid)
    if op in ("up", "down"):
        return draft_lists.turn_move(calls, uid, op)
    if op == "call":
        return draft_lists.turn_set(calls, uid, str(params.get("value", ""))[:20000])
    raise AnnotationError(f"unknown edit {op!r}")


def _form(params: dict[str, Any]) -> dict[str, str]:
    return {k[4:]: str(v) for k, v in params.items() if k.startswith("arg:")}


def _plan_op(
    steps: list[draft_editing.Step], op: str, params: dict[str, Any], data: dict, sample: Sample
) -> list[draft_editing.Step]:
    uid = params.get("uid") or None
    if op not in STEP_OPS:
        raise AnnotationError(f"unknown edit {op!r}")
    if op == "insert":
        return draft_editing.step_insert(steps, uid, text="")
    if uid is None:
        raise AnnotationError("which step?")
    if op == "delete":
        data["form_errors"].pop(uid, None)
        return draft_editing.step_delete(steps, uid)
    if op in ("up", "down"):
        return draft_editing.step_move(steps, uid, op)
    if op == "indent":
        return draft_editing.step_indent(steps, uid)
    if op == "outdent":
        return draft_editing.step_outdent(steps, uid)
    if op == "text":
        return draft_editing.step_set(steps, uid, text=str(params.get("value", "")))
    if op == "tool":
        name = str(params.get("value", "")) or None
        data["form_errors"].pop(uid, None)
        return draft_editing.step_set(steps, uid, tool=name, arguments={} if name else None)
    # arguments, from the form generated from the tool's schema
    step = next((s for s in steps if s.uid == uid), None)
    if step is None or not step.tool:
        raise AnnotationError("choose the step's tool first")
    schema = toolset(sample).get(step.tool, {})
    arguments, errors = draft_editing.arguments_from_form(schema, _form(params))
    if errors:
        data["form_errors"][uid] = {"errors": errors, "values": _form(params)}
        return steps
    data["form_errors"].pop(uid, None)
    return draft_editing.step_set(steps, uid, arguments=arguments)


def _call_op(
    calls: list[draft_editing.Call], op: str, params: dict[str, Any], data: dict, sample: Sample
) -> list[draft_editing.Call]:
    uid = params.get("uid") or None
    if op == "insert":
        return draft_editing.call_insert(calls, uid)
    if uid is None:
        raise AnnotationError("which call?")
    if op == "delete":
        data["form_errors"].pop(uid, None)
        return draft_editing.call_delete(calls, uid)
    if op in ("up", "down"):
        return draft_editing.call_move(calls, uid, op)
    if op == "tool":
        data["form_errors"].pop(uid, None)
        return draft_editing.call_set(calls, uid, name=str(params.get("value", "")), arguments={})
    if op == "arguments":
        call = next((c for c in calls if c.uid == uid), None)
        if call is None or not call.name:
            raise AnnotationError("choose the call's tool first")
        schema = toolset(sample).get(call.name, {})
        arguments, errors = draft_editing.arguments_from_form(schema, _form(params))
        if errors:
            data["form_errors"][uid] = {"errors": errors, "values": _form(params)}
            return calls
        data["form_errors"].pop(uid, None)
        return draft_editing.call_set(calls, uid, arguments=arguments)
    raise AnnotationError(f"unknown edit {op!r}")


# --- what the editor shows ----------------------------------------------------------------------


def editor_context(assignment: Assignment) -> dict[str, Any]:
    """The editor around a refinement item: the draft's state, when it was saved, and the
    reviewer's comment when the refinement came back."""
    draft = draft_get(assignment)
    returned = (
        Label.objects.filter(assignment=assignment, review=Label.Review.RETURNED)
        .order_by("-created_at")
        .prefetch_related("reviews__reviewer")
        .first()
    )
    comment = None
    if returned is not None:
        comment = returned.reviews.order_by("-created_at").first()
    return {
        "editor": draft_state(assignment, draft),
        "draft_saved": draft.updated_at,
        "returned": comment,
    }


def editor_preview(assignment: Assignment) -> dict[str, Any]:
    """The editor as it opens on the assignment's item, for the setup's preview: from a draft
    that is never saved (the assignment is not saved either), so nothing is stored."""
    draft = RefinementDraft(assignment=assignment, data=_initial(assignment.item.sample))
    return {"editor": draft_state(assignment, draft), "draft_saved": None, "returned": None}


def draft_state(assignment: Assignment, draft: RefinementDraft) -> dict[str, Any]:
    """Rows with their numbers, tool choices, argument fields and errors; the diff against
    the version the draft was loaded from; whether anything changed."""
    sample = assignment.item.sample
    data = draft.data
    tools = toolset(sample)
    state: dict[str, Any] = {"mode": data["mode"], "query": data.get("query"), "tools": list(tools)}
    form_errors = data.get("form_errors") or {}
    if data["mode"] == "acceptable":
        _acceptable_state(state, draft_editing.calls_load(data["calls"]), sample, tools, data)
    elif data["mode"] == "turns":
        _turns_state(state, draft_lists.turns_load(data["turns"]), sample, tools, data)
    elif data["mode"] == "plan":
        steps = draft_editing.steps_load(data["steps"])
        errors = draft_editing.plan_errors(steps, tools)
        numbers = draft_editing.numbering(steps)
        state["rows"] = [
            _row(step, number, tools, errors.get(step.uid), form_errors.get(step.uid))
            | {
                "depth": step.depth,
                "text": step.text,
                "can_indent": draft_editing.can_indent(steps, step.uid),
                "can_outdent": draft_editing.can_outdent(steps, step.uid),
            }
            for step, number in zip(steps, numbers, strict=True)
        ]
        state["diff"] = draft_editing.plan_diff(_original(sample, "plan"), steps)
        state["errors"] = errors
    elif data["mode"] == "calls":
        calls = draft_editing.calls_load(data["calls"])
        errors = draft_editing.calls_errors(
            calls, tools, one_call_per_tool="answer" in (sample.reference or {})
        )
        state["rows"] = [
            _row(call, str(i + 1), tools, errors.get(call.uid), form_errors.get(call.uid))
            for i, call in enumerate(calls)
        ]
        state["diff"] = draft_editing.calls_diff(_original(sample, "calls"), calls)
        state["errors"] = errors
    else:
        state["json"] = data.get("json", "")
        state["diff"] = []
        try:
            changed = json.loads(state["json"]) != sample.reference
        except ValueError:
            changed = True
        state["errors"] = {}
        state["json_changed"] = changed
    original_query = sample.input.get("query") if isinstance(sample.input, dict) else None
    state["query_changed"] = data["mode"] not in LIST_MODES and data.get("query") != original_query
    state["changed"] = bool(state["diff"]) or state["query_changed"] or state.get("json_changed")
    return state


def _acceptable_state(
    state: dict[str, Any],
    calls: list[draft_editing.Call],
    sample: Sample,
    tools: dict[str, dict[str, Any]],
    data: dict[str, Any],
) -> None:
    errors = draft_lists.acceptable_errors(calls, tools)
    form_errors = data.get("form_errors") or {}
    rows = []
    for number, call in enumerate(calls, start=1):
        typed = form_errors.get(call.uid) or {}
        arguments = draft_lists.argument_rows(call, tools.get(call.name))
        for argument in arguments:
            argument["error"] = (typed.get("errors") or {}).get(argument["name"], "")
            if argument["name"] in (typed.get("values") or {}):
                argument["json"] = typed["values"][argument["name"]]
        rows.append(
            {
                "uid": call.uid,
                "number": str(number),
                "tool": call.name,
                "arguments": arguments,
                "error": errors.get(call.uid, ""),
            }
        )
    state["rows"] = rows
    state["gold_error"] = errors.get("", "")
    state["diff"] = draft_editing.calls_diff(_original(sample, "acceptable"), calls)
    state["errors"] = errors


def _turns_state(
    state: dict[str, Any],
    calls: list[draft_lists.TurnCall],
    sample: Sample,
    tools: dict[str, dict[str, Any]],
    data: dict[str, Any],
) -> None:
    gold = _gold(sample.reference)
    parse = gold.parse_call
    if parse is None:
        raise AnnotationError("this gold's calls cannot be read")
    turn_count = int(data.get("turn_count") or 0)
    errors = draft_lists.turns_errors(calls, tools, parse)
    question = sample.input.get("question") if isinstance(sample.input, dict) else None
    asked = question if isinstance(question, list) else []
    state["turns"] = [
        {
            "index": index,
            "number": index + 1,
            "asked": _user_text(asked[index]) if index < len(asked) else "",
            "calls": [
                {
                    "uid": call.uid,
                    "number": f"{index + 1}.{position}",
                    "text": call.text,
                    "error": errors.get(call.uid, ""),
                }
                for position, call in enumerate(turn, start=1)
            ],
        }
        for index, turn in enumerate(draft_lists.grouped(calls, turn_count))
    ]
    state["diff"] = draft_lists.turns_diff(
        gold, _original(sample, "turns"), calls, turn_count, tools
    )
    state["errors"] = errors


def _user_text(messages: Any) -> str:
    """What the user says in a turn (its user messages' texts, joined)."""
    listed = messages if isinstance(messages, list) else []
    texts = [
        str(message.get("content") or "")
        for message in listed
        if isinstance(message, dict) and message.get("role") == "user"
    ]
    return "\n".join(texts)


def _row(
    entry: Any, number: str, tools: dict[str, dict], error: str | None, form: dict | None
) -> dict[str, Any]:
    tool = getattr(entry, "tool", None) if isinstance(entry, draft_editing.Step) else entry.name
    schema = tools.get(tool or "", {})
    fields = draft_editing.schema_fields(schema) if tool else []
    values = (form or {}).get("values") or draft_editing.form_from_arguments(
        schema, entry.arguments or {}
    )
    return {
        "uid": entry.uid,
        "number": number,
        "tool": tool or "",
        "fields": [
            {
                "field": field,
                "value": values.get(field.name, ""),
                "error": ((form or {}).get("errors") or {}).get(field.name, ""),
            }
            for field in fields
        ],
        "arguments_json": json.dumps(entry.arguments, ensure_ascii=False)
        if entry.arguments and not fields
        else "",
        "error": error or "",
    }


def reference_outline(reference: Any) -> dict[str, Any]:
    """A gold answer as a reviewer reads it: as the sample page shows it."""
    return gold_outline(reference)


# --- answers, review, revision ------------------------------------------------------------------


def refinement_answers(*, assignment: Assignment, verdict: str) -> dict[str, Any]:
    """The refined sample to store with the verdict. Refuses a "fixed" verdict on a draft with
    errors or without changes, and a "keep" verdict on a changed draft (AnnotationError)."""
    draft = draft_get(assignment)
    state = draft_state(assignment, draft)
    sample = assignment.item.sample
    if verdict == "keep":
        if state["changed"]:
            raise AnnotationError(
                "you changed the sample: choose “fixed”, or undo your edits", field="verdict"
            )
        return {"base_revision": draft.data["base_revision"]}
    if verdict == "drop":
        return {"base_revision": draft.data["base_revision"]}
    if not state["changed"]:
        raise AnnotationError(
            "nothing was changed: choose “keep”, or edit the sample", field="verdict"
        )
    if state["errors"] or (draft.data.get("form_errors") or {}):
        raise AnnotationError(
            "some steps or calls need fixing first (marked in the editor)", field="verdict"
        )
    data = draft.data
    if data["mode"] == "acceptable":
        reference = draft_lists.acceptable_to_reference(
            _gold(sample.reference), draft_editing.calls_load(data["calls"]), sample.reference
        )
    elif data["mode"] == "turns":
        reference = draft_lists.turns_to_reference(
            _gold(sample.reference),
            draft_lists.turns_load(data["turns"]),
            int(data.get("turn_count") or 0),
            sample.reference,
        )
    elif data["mode"] == "plan":
        reference = draft_editing.plan_to_reference(
            draft_editing.steps_load(data["steps"]), sample.reference
        )
    elif data["mode"] == "calls":
        reference = draft_editing.calls_to_reference(
            draft_editing.calls_load(data["calls"]), sample.reference, split=sample.split
        )
    else:
        try:
            reference = json.loads(data["json"])
        except ValueError as exc:
            raise AnnotationError(
                f"the gold answer is not valid JSON: {exc}", field="reference"
            ) from None
    new_input = dict(sample.input)
    if data.get("query") is not None:
        new_input["query"] = data["query"]
    return {
        "base_revision": data["base_revision"],
        "refined": {"input": new_input, "reference": reference},
        # The diff as the annotator saw it: the reviewer reads the same changes.
        "diff": [asdict(change) for change in state["diff"]],
        "query_changed": bool(state["query_changed"]),
    }


# SampleRevision.verdict of an applied refinement: approved by a reviewer, or taken as
# submitted because its campaign had no review stage.
REVIEWED = "approved"
UNREVIEWED = "unreviewed"


def refinement_apply(*, label: Label, reviewer: Any = None) -> Any:
    """An approved refinement: "fixed" becomes the sample's new revision; "drop" marks the
    sample as dropped (metadata); "keep" changes nothing. Raises AnnotationError on a
    conflict with a refinement that landed first."""
    verdict = label.answers.get("verdict")
    sample = label.item.sample
    if verdict == "fixed":
        refined = label.answers["refined"]
        try:
            return sample_revise(
                sample_id=sample.pk,
                base_revision=int(label.answers["base_revision"]),
                input=refined["input"],
                reference=refined["reference"],
                author=label.annotator,
                note=(label.note or "")
                + (f" (approved by {reviewer.get_username()})" if reviewer else ""),
                reviewer=reviewer,
                verdict=REVIEWED if reviewer else UNREVIEWED,
            )
        except RevisionConflict as exc:
            raise AnnotationError(str(exc)) from None
    if verdict == "drop":
        samples_annotate(values={sample.pk: {"dropped_by_refinement": label.pk}})
    return None


def review_next(*, campaign: Campaign, reviewer: Any) -> Label | None:
    """The oldest refinement awaiting review that the reviewer did not write."""
    return (
        Label.objects.filter(campaign=campaign, is_current=True, review=Label.Review.PENDING)
        .exclude(annotator=reviewer)
        .select_related("item__sample", "annotator")
        .order_by("created_at")
        .first()
    )


def review_decide(*, label_id: int, reviewer: Any, approve: bool, comment: str = "") -> Review:
    """Approve (the refinement becomes the sample's new revision) or return it to its author
    with a comment: their label stays in the history and the item is theirs again, with
    their draft. Raises AnnotationError if the label is not awaiting review."""
    with transaction.atomic():
        label = (
            Label.objects.select_for_update(of=("self",))
            .select_related("item__sample", "annotator", "campaign")
            .filter(pk=label_id, is_current=True, review=Label.Review.PENDING)
            .first()
        )
        if label is None:
            raise AnnotationError("this refinement is not awaiting review")
        if label.annotator_id == reviewer.pk:
            raise AnnotationError("a refinement is reviewed by someone else")
        if not approve and not comment.strip():
            raise AnnotationError("say what to change: a returned refinement needs a comment")
        review = Review.objects.create(
            label=label,
            reviewer=reviewer,
            decision=Review.Decision.APPROVED if approve else Review.Decision.RETURNED,
            comment=comment,
        )
        if approve:
            refinement_apply(label=label, reviewer=reviewer)
            label.review = Label.Review.APPROVED
            label.save(update_fields=["review"])
            return review
        label.review = Label.Review.RETURNED
        label.is_current = False
        label.save(update_fields=["review", "is_current"])
        returned = label.campaign_id
        transaction.on_commit(lambda: campaign_labels_counted(returned, -1))
        assignment = Assignment.objects.select_for_update().get(pk=label.assignment_id)
        assignment.status = Assignment.Status.LEASED
        assignment.submitted_at = None
        # A week: the author may not be at work when it comes back.
        assignment.lease_until = timezone.now() + timedelta(days=7)
        # The newest lease is the one an annotator resumes: returned work comes first.
        assignment.leased_at = timezone.now()
        assignment.save(update_fields=["status", "submitted_at", "lease_until", "leased_at"])
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE annotation_item SET submitted = submitted - 1 WHERE id = %s",
                [assignment.item_id],
            )
    return review
