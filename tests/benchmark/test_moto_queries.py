"""moto's Query made to cost what DynamoDB's does (groundchat_cli.runs.make_moto_costs_faithful)
answers exactly as moto's own Query: on a table's key and on global indexes, with key conditions,
limits, both orders and start keys, after random writes that move items in, out of and within the
indexes."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

HASHES = ("a", "b", "c")
SORTS = ("a0", "a1", "a2", "b0", "b1", "b2", "c0", "c1")  # few keys: writes often land on items that exist
GROUPS = ("g1", "g2", "g/3")
CONDITIONS = ("=", "<", "<=", ">", ">=", "begins_with", "between")


def make_table(client, name: str) -> None:
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in
                              (("pk", "S"), ("sk", "S"), ("g", "S"), ("h", "S"), ("n", "N"))],
        GlobalSecondaryIndexes=[
            # As the run views' indexes: the table's sort key is the index's (unique in a partition).
            {"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            # Ties on the index's sort key, ordered by the table's key; a number sort key.
            {"IndexName": "by_h", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
        ],
    )


def random_write(rng: random.Random, updates_only: bool) -> tuple:
    kind = "update" if updates_only else rng.choices(("put", "delete", "update"), weights=(6, 1, 2))[0]
    pk, sk = rng.choice(HASHES), rng.choice(SORTS)
    if kind == "put":
        item = {"pk": pk, "sk": sk}
        for name, values in (("g", GROUPS), ("h", GROUPS), ("n", range(5))):
            if rng.random() < 0.7:  # sparse: some items are in no index
                item[name] = rng.choice(values)
        return ("put", item)
    return ("delete", pk, sk) if kind == "delete" else ("update", pk, sk, rng.choice(GROUPS))


def random_query(rng: random.Random) -> dict:
    on = rng.choice(("table", "by_g", "by_h"))
    return {"on": on, "key": rng.choice(HASHES if on == "table" else GROUPS),
            "condition": rng.choice((None, None, *CONDITIONS)), "bounds": sorted(rng.choices(range(len(SORTS)), k=2)),
            "limit": rng.choice((None, 1, 2, 3, 4, 5)), "forward": rng.random() < 0.5}


def query_args(table: str, q: dict) -> dict:
    index = q["on"] != "table"
    hash_attr, range_attr = {"table": ("pk", "sk"), "by_g": ("g", "sk"), "by_h": ("h", "n")}[q["on"]]
    low, high = q["bounds"]  # positions in SORTS
    value = (lambda i: {"N": str(i % 5)}) if range_attr == "n" else (lambda i: {"S": SORTS[i]})
    expression, values = "#h = :h", {":h": {"S": q["key"]}}
    condition = q["condition"]
    if condition == "begins_with" and range_attr == "sk":
        expression += " AND begins_with(#r, :lo)"
        values[":lo"] = {"S": SORTS[low][:1]}
    elif condition == "between":
        expression += " AND #r BETWEEN :lo AND :hi"
        values[":lo"], values[":hi"] = value(low), value(max(low, high) if range_attr == "sk" else max(low % 5, high % 5))
    elif condition is not None and condition != "begins_with":
        expression += f" AND #r {condition} :lo"
        values[":lo"] = value(low)
    args = {"TableName": table, "KeyConditionExpression": expression, "ScanIndexForward": q["forward"],
            "ExpressionAttributeNames": {"#h": hash_attr, **({"#r": range_attr} if "#r" in expression else {})},
            "ExpressionAttributeValues": values}
    if index:
        args["IndexName"] = q["on"]
    if q["limit"]:
        args["Limit"] = q["limit"]
    return args


def every_page(client, args: dict) -> list[dict]:
    """Each page as the client gets it, following LastEvaluatedKey to the end."""
    pages = []
    while True:
        page = client.query(**args)
        pages.append({k: page.get(k) for k in ("Items", "Count", "ScannedCount", "LastEvaluatedKey")})
        if "LastEvaluatedKey" not in page or len(pages) > 60:
            return pages
        args = {**args, "ExclusiveStartKey": page["LastEvaluatedKey"]}


def as_moto_answers(client, args: dict) -> list[dict]:
    from moto.dynamodb.models.table import Table

    faithful = Table.query
    Table.query = faithful._moto_own
    try:
        return every_page(client, args)
    finally:
        Table.query = faithful


def apply(client, table: str, write: tuple) -> None:
    if write[0] == "put":
        client.put_item(TableName=table, Item={k: ({"N": str(v)} if k == "n" else {"S": v}) for k, v in write[1].items()})
    elif write[0] == "delete":
        client.delete_item(TableName=table, Key={"pk": {"S": write[1]}, "sk": {"S": write[2]}})
    else:  # in place: the item joins (or moves within) an index without a put
        client.update_item(TableName=table, Key={"pk": {"S": write[1]}, "sk": {"S": write[2]}},
                           UpdateExpression="SET g = :g, h = :g, n = :n",
                           ExpressionAttributeValues={":g": {"S": write[3]}, ":n": {"N": "1"}})


def test_faithful_queries_answer_as_moto_does_on_random_data(settings):
    import boto3
    from groundchat_cli.moto_store import make_moto_faithful
    from moto import mock_aws

    make_moto_faithful()
    counter = iter(range(10_000))

    @hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(rng=st.randoms(use_true_random=False))
    def check(rng):
        table = f"t{next(counter)}"
        make_table(client, table)
        for round_ in range(5):  # writes, then queries on what they left, five times over
            # Some rounds only update items in place (no put to drop what the last queries kept).
            updates_only = round_ > 0 and rng.random() < 0.4
            for _ in range(rng.randint(1, 4) if updates_only else rng.randint(0, 25)):
                apply(client, table, random_write(rng, updates_only))
            for _ in range(8):
                args = query_args(table, random_query(rng))
                assert every_page(client, args) == as_moto_answers(client, args), args

    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-west-1")
        check()


def test_an_index_query_reads_only_its_page(settings):
    """The faithful Query hands moto the index partition from the start key, one item past the
    page: never the table."""
    import boto3
    from groundchat_cli.moto_store import make_moto_faithful
    from moto import mock_aws
    from moto.dynamodb.models.table import Table

    make_moto_faithful()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-west-1")
        make_table(client, "big")
        for i in range(300):
            item = {"pk": {"S": f"p{i % 7}"}, "sk": {"S": f"k{i:04d}"}}
            if i % 3 == 0:
                item["g"] = {"S": "g1"}
            client.put_item(TableName="big", Item=item)
        seen = []
        original_all_items = Table.all_items

        def all_items(self):
            got = original_all_items(self)
            seen.append(len(got))
            return got

        Table.all_items = all_items
        try:
            first = client.query(TableName="big", IndexName="by_g", KeyConditionExpression="g = :g",
                                 ExpressionAttributeValues={":g": {"S": "g1"}}, Limit=5, ScanIndexForward=False)
            second = client.query(TableName="big", IndexName="by_g", KeyConditionExpression="g = :g",
                                  ExpressionAttributeValues={":g": {"S": "g1"}}, Limit=5, ScanIndexForward=False,
                                  ExclusiveStartKey=first["LastEvaluatedKey"])
        finally:
            Table.all_items = original_all_items
        assert seen == [6, 6]
        assert [i["sk"]["S"] for i in first["Items"] + second["Items"]] == [f"k{i:04d}" for i in range(297, 267, -3)]
