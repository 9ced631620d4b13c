"""Model instances from hand-written SQL, for the few statements on every annotator's path.

The ORM compiles a query anew on each call; for a join with an EXISTS or a locked read that is
most of the CPU a studio request spends (profiles of next and submit). These helpers give the
same instances the ORM would (its column list, its converters, `from_db`), from statements
written once."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Model

M = TypeVar("M", bound=Model)


@functools.cache
def _layout(model: type[Model]) -> tuple[list[str], list[str], list[tuple[int, Any]]]:
    """(column names, attnames, [(position, converter)]) of a model's concrete fields."""
    fields = model._meta.concrete_fields
    converters = [
        (position, convert)
        for position, field in enumerate(fields)
        for convert in field.get_db_converters(connection)
    ]
    return [str(f.column) for f in fields], [f.attname for f in fields], converters


def columns(model: type[Model], alias: str) -> str:
    """The model's columns as a select list, each prefixed with `alias.`."""
    return ", ".join(f"{alias}.{column}" for column in _layout(model)[0])


def select(model: type[Model], alias: str, rest: str) -> str:
    """`SELECT` of the model's columns (`instance` reads them) from its table as `alias`,
    followed by `rest` (WHERE, ORDER BY, FOR UPDATE...): a statement to write once."""
    return f"SELECT {columns(model, alias)} FROM {model._meta.db_table} {alias} {rest}"  # noqa: S608 (the models' own names)


def width(model: type[Model]) -> int:
    return len(_layout(model)[0])


def instance(model: type[M], values: Sequence[Any]) -> M:
    """The model's instance from its columns' values (in `columns` order), as the ORM reads it."""
    _, attnames, converters = _layout(model)
    if converters:
        values = list(values)
        for position, convert in converters:
            values[position] = convert(values[position], None, connection)
    return model.from_db(connection.alias, attnames, values)


def fetch(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def fetch_all(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.cache
def _insert_sql(model: type[Model]) -> tuple[str, list[Any]]:
    """INSERT of every concrete field but the automatic primary key, RETURNING it."""
    meta = model._meta
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    quote = connection.ops.quote_name
    names = ", ".join(quote(str(f.column)) for f in fields)
    return (
        f"INSERT INTO {quote(meta.db_table)} ({names})"  # noqa: S608 (the models' own names)
        f" VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {quote(str(meta.pk.column))}",
        fields,
    )


def insert(obj: M) -> M:
    """Store a new instance as `obj.save()` would (each field's pre_save, e.g. auto_now_add,
    then its database value), by a statement written once; its primary key is set. For models
    with no save() override and no signal receivers, on paths taken by every request."""
    sql, fields = _insert_sql(type(obj))
    values = [field.get_db_prep_save(field.pre_save(obj, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        obj.pk = cursor.fetchone()[0]
    obj._state.adding = False
    obj._state.db = connection.alias
    return obj
