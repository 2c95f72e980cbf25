"""The chat page is served with each tool's drawer (`Tool.drawer`): the page's script draws a tool
by what the tool says of itself, never by a list of names of its own."""
import json

from groundchat.tools.catalog import page_drawers
from groundchat_testkit.scripted import ScriptedModel


async def test_the_chat_page_carries_the_map_of_every_tools_drawer(make_env):
    env = make_env(ScriptedModel([]))
    async with env.client() as c:
        page = (await c.get("/chat")).text
    served = page.split('<script id="tool-drawers" type="application/json">')[1].split("</script>")[0]
    assert json.loads(served) == page_drawers()
    assert json.loads(served)["list_runs"] == "run-list" and json.loads(served)["show_view"] == "view"
    # Before the script that reads it.
    assert page.index('id="tool-drawers"') < page.index('src="static/transcript.js"')
