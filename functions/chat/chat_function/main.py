"""The ASGI entry point uvicorn serves (under the Lambda Web Adapter in AWS, directly locally)."""
from chat_function.app import create_app

app = create_app()
