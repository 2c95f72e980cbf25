"""The template's tables are the code's tables: same names, keys, indexes and TTL."""
from __future__ import annotations

import gen_tables
from groundchat.config import Settings
from groundchat.store.tables import TableDef
from tests.infra.conftest import TEMPLATE


def _code_tables() -> list[TableDef]:
    return gen_tables.all_tables()


def test_the_generated_block_is_current():
    assert gen_tables.current_block(TEMPLATE.read_text(encoding="utf-8")) == gen_tables.render()


def test_every_table_the_code_uses_is_declared_identically(resources):
    expected_names = set()
    for table in _code_tables():
        logical = gen_tables.logical_id(table.logical)
        expected_names.add(logical)
        assert logical in resources, f"{table.logical} is used by the code but not in template.yaml"
        props = resources[logical]["Properties"]
        code = table.create_args(Settings(table_prefix=""))
        assert props["TableName"] == {"Fn::Sub": "${AWS::StackName}-" + table.logical}
        assert props["KeySchema"] == code["KeySchema"]
        assert sorted(props["AttributeDefinitions"], key=str) == sorted(code["AttributeDefinitions"], key=str)
        assert props.get("GlobalSecondaryIndexes", []) == code.get("GlobalSecondaryIndexes", [])
        if table.ttl_attribute:
            assert props["TimeToLiveSpecification"] == {"AttributeName": table.ttl_attribute, "Enabled": True}
        else:
            assert "TimeToLiveSpecification" not in props
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert props["DeletionProtectionEnabled"] == {"Fn::If": ["IsProd", True, False]}
    declared = {k for k, v in resources.items() if v["Type"] == "AWS::DynamoDB::Table"}
    assert declared == expected_names, "the template declares a table the code does not know"


def test_the_stack_tells_the_code_the_same_prefix(template):
    assert template["Globals"]["Function"]["Environment"]["Variables"]["GROUNDCHAT_TABLE_PREFIX"] == {"Fn::Sub": gen_tables.TABLE_PREFIX_SUB}


def test_the_known_tables_are_there():
    # The conversations' indexes back list_for_owner and list_shared; losing one breaks a route.
    by_name = {t.logical: t for t in _code_tables()}
    assert {"conversations", "messages", "users", "traces"} <= set(by_name)
    assert [ix.name for ix in by_name["conversations"].indexes] == ["by_owner", "by_shared"]
    assert by_name["messages"].range_key == ("seq", "N")


def test_prod_is_the_stage_that_protects(template):
    assert template["Conditions"]["IsProd"] == {"Fn::Equals": [{"Ref": "Stage"}, "prod"]}
