"""`AnyOf(F("field"), values)`: the rows whose field is one of many values, as
`field = ANY(%s::type[])` with the values as one array parameter.

Django's `field__in=values` writes one placeholder per value; for the 20,000 predictions behind
a campaign of 10,000 pairs that is a statement of 20,000 placeholders, which psycopg converts
and PostgreSQL parses into as many constants: 0.56 s to read their scores, against 0.20 s with
one array (measured on the agreement benchmark's campaign). Used as a filter expression, as
Django allows any lookup: `Prediction.objects.filter(AnyOf(F("pk"), ids))`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db.models import Lookup

if TYPE_CHECKING:
    _Lookup = Lookup[Any]
else:
    _Lookup = Lookup


class AnyOf(_Lookup):
    lookup_name = "any"
    # The values are a collection, not one value of the field: each is prepared below.
    prepare_rhs = False

    def get_db_prep_lookup(  # type: ignore[override]  # a collection, not one value
        self, value: Iterable[Any], connection: Any
    ) -> tuple[str, tuple[Any, ...]]:
        field = self.lhs.output_field
        return "%s", ([field.get_db_prep_value(v, connection, prepared=False) for v in value],)

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[Any, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        array = self.lhs.output_field.cast_db_type(connection)
        return f"{lhs} = ANY({rhs}::{array}[])", (*lhs_params, *rhs_params)
