"""The forms shared by the admin and the researchers' pages: those that launch machine work
(/runs/new/, /judging/new/: `run_launch`, `judge_launch`) and those that set up endpoints and
judges (/endpoints/, /judges/: `endpoint_save`, `judge_save`). Both validate here and write
through the one service, so a page and the admin cannot write differently."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from benchmarks.kit.judging import templates
from benchmarks.kit.registry import get_suite, suite_names
from benchmarks.models import Benchmark
from config.adminsite import BoundedJSONFormField
from config.numbers import column_bounds
from config.untrusted import UntrustedInputError, json_loads_bounded
from evaluation.credentials import KEY_MAX_LENGTH
from evaluation.judging import JUDGE_FIELDS, JudgeError, judge_launch, judge_save
from evaluation.models import Endpoint, Judge, JudgeJob, Run
from evaluation.services import ENDPOINT_FIELDS, MAX_TRIALS, RunError, endpoint_save, run_launch


def task_choices(benchmark: Benchmark | None = None) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every suite's tasks grouped by suite, as "suite:task" (one benchmark's suite only, when
    it is known)."""
    groups = []
    suites = [benchmark.suite] if benchmark is not None else suite_names()
    for suite in suites:
        try:
            tasks = get_suite(suite).tasks
        except (KeyError, ValueError):
            continue
        if tasks:
            groups.append(
                (
                    suite,
                    [(f"{suite}:{name}", f"{name}: {spec.title}") for name, spec in tasks.items()],
                )
            )
    return groups


def task_options(benchmark: Benchmark) -> list[dict[str, Any]]:
    """Each task of the benchmark's suite with the options a run of it takes ({"task", "title",
    "options": [Option.as_dict()]}), for the launch form to show."""
    try:
        suite = get_suite(benchmark.suite)
    except ValueError:
        return []
    return [
        {
            "task": name,
            "title": spec.title,
            "options": [option.as_dict() for option in suite.options(name)],
        }
        for name, spec in suite.tasks.items()
    ]


MAX_JSON_BYTES = 64_000


def RUN(name: str) -> Any:
    return Run._meta.get_field(name)


class JSONObjectField(forms.CharField):
    """A JSON object typed into a text box; {} when left empty."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 2, "cols": 60}))
        super().__init__(**kwargs)

    def clean(self, value: Any) -> dict[str, Any]:
        text = super().clean(value).strip()
        if not text:
            return {}
        try:
            # the bounded reader: no NaN, no NUL or lone surrogate (which jsonb cannot store)
            parsed = json_loads_bounded(text, max_bytes=MAX_JSON_BYTES)
        except UntrustedInputError as exc:
            raise ValidationError(f"not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise ValidationError('expected a JSON object, e.g. {"temperature": 0}')
        return parsed


class EndpointChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        state = "" if obj.status == Endpoint.Status.READY else f", {obj.get_status_display()}"
        return f"{obj.name}: {obj.model} ({obj.style}{state})"


class LaunchRunForm(forms.Form):
    """What run_launch takes. Given the benchmark (`benchmark=`), the task and split lists are
    that benchmark's only (the page redraws them when another benchmark is picked); without it
    (the admin) every suite's tasks are offered and the split is typed."""

    name = forms.CharField(required=False, max_length=200)
    benchmark = forms.ModelChoiceField(queryset=Benchmark.objects.order_by("name"))
    task = forms.ChoiceField(help_text="Grouped by suite; it must be the benchmark's suite.")
    split = forms.CharField(required=False, help_text="Empty: the task's own split(s).")
    endpoint = EndpointChoiceField(
        queryset=Endpoint.objects.order_by("name"),
        help_text="The model is the endpoint's.",
    )
    tool_mode = forms.ChoiceField(
        required=False,
        choices=[
            ("text", "text: the benchmark's own prompt"),
            ("native", "native: tools declared in the request, calls read from tool_calls"),
        ],
        initial="text",
        help_text="Native needs a chat endpoint and a task with a native form; "
        "tool_choice and parallel_tool_calls go in the generation parameters.",
    )
    # Every number is bounded by the column it fills (config.numbers.column_bounds).
    shots = forms.IntegerField(initial=0, **column_bounds(RUN("shots")))
    item_limit = forms.IntegerField(
        required=False,
        help_text="Empty: every item.",
        **column_bounds(RUN("item_limit"), min_value=1),
    )
    trials = forms.IntegerField(
        min_value=1,
        max_value=MAX_TRIALS,
        initial=1,
        required=False,
        help_text="How many times each item is answered (trial t sends the seed + t).",
    )
    params = JSONObjectField(
        label="Generation parameters", help_text='Over the endpoint\'s, e.g. {"temperature": 0}'
    )
    options = JSONObjectField(
        label="Task options",
        help_text='e.g. {"unparsed": "exclude"}: only the options the task declares (listed '
        "below once a benchmark is chosen)",
    )
    seed = forms.IntegerField(initial=0, **column_bounds(RUN("seed")))
    budget = forms.DecimalField(
        required=False, help_text=RUN("budget").help_text, **column_bounds(RUN("budget"))
    )

    def __init__(self, *args: Any, benchmark: Benchmark | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        task = self.fields["task"]
        assert isinstance(task, forms.ChoiceField)
        task.choices = task_choices(benchmark)
        # The options each task of the benchmark takes, as its suite declares them.
        self.task_options = task_options(benchmark) if benchmark is not None else []
        if benchmark is not None:
            task.help_text = f"The tasks of {benchmark.suite} benchmarks."
            splits = benchmark.samples.order_by("split").values_list("split", flat=True).distinct()
            self.fields["split"] = forms.ChoiceField(
                required=False,
                choices=[("", "the task's own split(s)"), *((s, s) for s in splits)],
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        benchmark, task = data.get("benchmark"), data.get("task", "")
        if benchmark and task:
            suite, _, name = task.partition(":")
            if suite != benchmark.suite:
                self.add_error(
                    "task",
                    f"{benchmark.name} is a {benchmark.suite} benchmark; pick one of its tasks",
                )
            data["task_name"] = name
        options = data.get("options")
        if isinstance(options, dict):
            if data.get("tool_mode") == "native":
                options = {**options, "tool_mode": "native"}
            if data.get("trials"):
                options = {**options, "trials": data["trials"]}
            data["options"] = options
        return data

    def launch(self, user: Any) -> Run:
        """The run, through run_launch (RunError for what the service refuses)."""
        data = self.cleaned_data
        return run_launch(
            benchmark=data["benchmark"],
            task=data["task_name"],
            endpoint=data["endpoint"],
            split=(data["split"] or "").strip(),
            shots=data["shots"],
            item_limit=data["item_limit"],
            params=data["params"],
            options=data["options"],
            seed=data["seed"],
            name=data["name"],
            user=user,
            budget=data["budget"],
        )


class RunChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        name = f" {obj.name}" if obj.name else ""
        return f"#{obj.pk}{name}: {obj.benchmark.name} · {obj.task} · {obj.model_name or '—'}"


def _finished_runs() -> Any:
    return Run.objects.filter(status=Run.Status.DONE).select_related("benchmark").order_by("-pk")


class LaunchJudgeJobForm(forms.Form):
    judge = forms.ModelChoiceField(
        queryset=Judge.objects.filter(endpoint__isnull=False).order_by("name"),
        help_text="A judge is an endpoint and a template.",
    )
    run = RunChoiceField(queryset=_finished_runs(), help_text="A finished run (pairwise: A).")
    against = RunChoiceField(
        queryset=_finished_runs(),
        required=False,
        help_text="Pairwise judges: the run compared with (B).",
    )
    repeats = forms.IntegerField(min_value=1, max_value=20, initial=3)
    budget = forms.DecimalField(
        required=False,
        help_text=JudgeJob._meta.get_field("budget").help_text,
        **column_bounds(JudgeJob._meta.get_field("budget")),
    )

    def launch(self, user: Any) -> JudgeJob:
        """The job, through judge_launch (JudgeError for what the service refuses)."""
        data = self.cleaned_data
        budget: Decimal | None = data["budget"]
        return judge_launch(
            judge=data["judge"],
            run=data["run"],
            against=data["against"],
            repeats=data["repeats"],
            user=user,
            budget=budget,
        )


# --- endpoints and judges -----------------------------------------------------------------------


def bounded_json(db_field: models.Field, **kwargs: Any) -> Any:
    """A model form's fields, JSON read by the one bounded reader (as in the admin)."""
    if isinstance(db_field, models.JSONField):
        kwargs["form_class"] = BoundedJSONFormField
    return db_field.formfield(**kwargs)


ENDPOINT_BOUNDS: tuple[tuple[str, float, float | None], ...] = (
    ("max_concurrency", 1, None),
    ("requests_per_minute", 1, None),
    ("timeout_seconds", 0.001, None),
    ("max_attempts", 1, 100),
    ("max_claims", 1, 100),
)


class EndpointForm(forms.ModelForm):
    """An endpoint's fields, and its key: entered here (never shown again), or removed. The
    admin's form and the endpoint pages; endpoint_save checks and writes."""

    api_key = forms.CharField(
        label="Key",
        required=False,
        max_length=KEY_MAX_LENGTH,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted and sent only to this base URL; never shown again (only "
        "its last four characters). Leave empty to keep the stored key; a new base URL needs "
        "the key entered again.",
    )
    clear_api_key = forms.BooleanField(label="Remove the stored key", required=False)

    class Meta:
        model = Endpoint
        # The editable fields (the key's columns are not editable).
        fields = [*ENDPOINT_FIELDS]
        formfield_callback = bounded_json

    def __init__(self, *args: Any, page: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The bounds the API's serializer and the table's constraints hold (not a constraint's
        # name on the form: the field's own message).
        for name, low, high in ENDPOINT_BOUNDS:
            field = self.fields.get(name)
            if isinstance(field, (forms.IntegerField, forms.FloatField)):
                field.validators.append(MinValueValidator(low))
                field.widget.attrs["min"] = low
                if high is not None:
                    field.validators.append(MaxValueValidator(high))
                    field.widget.attrs["max"] = high
        # A key variable only where the operator lists some (or the endpoint names one): the
        # pages offer the field then only (the admin, the operators', always shows it).
        self.offers_key_variable = bool(
            getattr(settings, "ENDPOINT_KEY_VARIABLES", []) or self.instance.api_key_env
        )
        if page and not self.offers_key_variable:
            del self.fields["api_key_env"]
        if "base_url" in self.fields:  # not in the admin of whoever may only view endpoints
            self.fields["base_url"].label = "Base URL"
        if page:
            self.fields["default_params"].widget.attrs.update({"rows": 3})

    def _fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {n: data[n] for n in ENDPOINT_FIELDS if n in data and n in self.fields}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        # The service's own checks (a new address without the key, a key and a variable...)
        # before the save, so that they are shown on the form like the model's.
        try:
            endpoint_save(
                endpoint=copy.copy(self.instance),
                api_key=data.get("api_key"),
                clear_api_key=bool(data.get("clear_api_key")),
                commit=False,
                **self._fields(),
            )
        except RunError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, str(exc))
        return data

    def save_endpoint(self, endpoint: Endpoint | None = None) -> Endpoint:
        """Save through endpoint_save (RunError for what it refuses)."""
        data = self.cleaned_data
        return endpoint_save(
            endpoint=endpoint if endpoint is not None else self.instance,
            api_key=data.get("api_key"),
            clear_api_key=bool(data.get("clear_api_key")),
            **self._fields(),
        )


def template_choices() -> list[tuple[str, str]]:
    return [
        (name, f"{name}: {spec.title} ({spec.kind})") for name, spec in sorted(templates().items())
    ]


class JudgeForm(forms.ModelForm):
    """A judge: a name, a registered template, an endpoint and parameters. The admin's form
    and the judge pages; judge_save checks and writes (the kind is the template's)."""

    template = forms.ChoiceField(choices=())
    # Left out of a post: the judge's own (a new judge's default, the forced call).
    answer_mode = forms.ChoiceField(
        choices=Judge.AnswerMode.choices,
        required=False,
        initial=Judge.AnswerMode.CALL,
        label="Answers by",
        help_text=Judge._meta.get_field("answer_mode").help_text,
    )

    class Meta:
        model = Judge
        fields = list(JUDGE_FIELDS)
        formfield_callback = bounded_json

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        template = self.fields["template"]
        assert isinstance(template, forms.ChoiceField)
        template.choices = template_choices()
        endpoint = self.fields["endpoint"]
        assert isinstance(endpoint, forms.ModelChoiceField)
        endpoint.queryset = Endpoint.objects.order_by("name")

    def _fields(self) -> dict[str, Any]:
        fields = {n: self.cleaned_data[n] for n in JUDGE_FIELDS if n in self.cleaned_data}
        if not fields.get("answer_mode"):
            fields.pop("answer_mode", None)
        return fields

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            judge_save(judge=copy.copy(self.instance), commit=False, **self._fields())
        except JudgeError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, str(exc))
        return data

    def save(self, commit: bool = True) -> Judge:
        judge = judge_save(judge=self.instance, commit=commit, **self._fields())
        if not commit:  # the admin saves the related rows after its save_model (none here)
            self.save_m2m = self._save_m2m  # type: ignore[attr-defined,method-assign]
        return judge
