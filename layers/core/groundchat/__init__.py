"""groundchat core: framework-free pieces shared by every function."""

BOT_NAME_DEFAULT = "groundchat"
