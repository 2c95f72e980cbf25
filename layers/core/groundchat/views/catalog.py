"""The view catalog: every part a view may contain, as strict models (unknown keys are refused).

The limits keep a view small enough to read and to store with the answer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, StringConstraints, model_validator

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Unit = Annotated[str, StringConstraints(strip_whitespace=True, max_length=20)]
# Strict: a `true` in a cell is a mistake, not the number 1.
Number = Union[StrictInt, StrictFloat]
Value = Union[StrictInt, StrictFloat, Annotated[StrictStr, StringConstraints(max_length=200)]]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StatItem(_Strict):
    label: Text
    value: Value
    unit: Unit | None = Field(default=None, description="shown after the value, e.g. 'runs'; '%' marks a percentage")
    format: Literal["number", "percent", "usd"] | None = Field(
        default=None, description="percent: the value is already a percentage (87.5 shows as 87.5%); usd: shown as $value")


class Stats(_Strict):
    type: Literal["stats"]
    items: list[StatItem] = Field(min_length=1, max_length=12)


class Table(_Strict):
    type: Literal["table"]
    caption: Text
    columns: list[Text] = Field(min_length=1, max_length=8, description="a column whose label has '%' holds percentages")
    rows: list[list[Value | None]] = Field(min_length=1, max_length=50)

    @model_validator(mode="after")
    def _rows_fit_columns(self) -> "Table":
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"rows[{i}] has {len(row)} cells but the table has {len(self.columns)} columns")
        return self


class Alert(_Strict):
    type: Literal["alert"]
    level: Literal["info", "warning", "error"]
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]


class Bar(_Strict):
    label: Text
    value: Annotated[Number, Field(ge=0)]


class BarChart(_Strict):
    type: Literal["bar_chart"]
    title: Text
    unit: Unit = Field(description="what the values measure, e.g. 'violations per run'; '%' marks percentages")
    bars: list[Bar] = Field(min_length=1, max_length=30)


class Option(_Strict):
    label: Text
    value: Annotated[str, StringConstraints(strip_whitespace=True, max_length=128)]


class FormField(_Strict):
    name: Annotated[str, StringConstraints(min_length=1, max_length=40)] = Field(description="a field of the form's action")
    label: Text
    options: list[Option] = Field(min_length=1, max_length=50)

    @model_validator(mode="before")
    @classmethod
    def _plain_values(cls, data: Any) -> Any:  # pydantic's "before" validator: the input as given
        # `values: ["none", "checklist"]` is shorthand for options labelled by their value.
        if not isinstance(data, dict):
            return data
        given: dict[str, JsonValue] = {**data}
        if "values" in given and "options" not in given:
            values = given.pop("values")
            if isinstance(values, list):
                given["options"] = [{"label": v, "value": v} if isinstance(v, str) else v for v in values]
        return given


class Form(_Strict):
    type: Literal["form"]
    action: Annotated[str, StringConstraints(min_length=1, max_length=40)] = Field(description="a registered action: open-runs or compare-runs")
    title: Text | None = None
    submit_label: Text | None = None
    fields: list[FormField] = Field(min_length=1, max_length=6)


Part = Annotated[Union[Stats, Table, Alert, BarChart, Form], Field(discriminator="type")]


class View(_Strict):
    """A title and ordered parts; at most one form, and only as the last part."""

    title: Text
    parts: list[Part] = Field(min_length=1, max_length=8)

    @model_validator(mode="after")
    def _form_last(self) -> "View":
        forms = [i for i, p in enumerate(self.parts) if isinstance(p, Form)]
        if len(forms) > 1:
            raise ValueError(f"a view has at most one form; parts {forms} are forms")
        if forms and forms[0] != len(self.parts) - 1:
            raise ValueError(f"the form (parts[{forms[0]}]) must be the last part")
        return self


# What the model is sent as `show_view`'s schema: the catalog described once, each part by its
# fields, instead of the full generated schema (3,500 characters on every step). `View` above still
# checks every view in full; a view that breaks it is refused with what to fix.
PART_TYPES = ("stats", "table", "alert", "bar_chart", "form")
COMPACT_SCHEMA: JsonObject = {
    "type": "object",
    "required": ["title", "parts"],
    "properties": {
        "title": {"type": "string"},
        "parts": {
            "type": "array",
            "description": (
                "1-8 parts, each with its `type`: stats {items: [{label, value, unit?, format?: number|percent|usd}]}; "
                "table {caption, columns: [label], rows: [[value]]}; alert {level: info|warning|error, text}; "
                "bar_chart {title, unit, bars: [{label, value}]}; form, only as the last part "
                "{action, title?, submit_label?, fields: [{name, label, options: [{label, value}]}]}. "
                "A '%' in a unit or column label marks percentages."
            ),
            "items": {"type": "object", "required": ["type"], "properties": {"type": {"enum": list(PART_TYPES)}}},
        },
    },
}
