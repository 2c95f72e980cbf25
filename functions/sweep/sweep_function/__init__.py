"""The scheduled sweep: gives back the budget held by reservations whose request crashed."""
