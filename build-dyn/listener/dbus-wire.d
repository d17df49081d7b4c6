build-dyn/listener/dbus-wire.o: listener/dbus-wire.c listener/dbus-wire.h
listener/dbus-wire.h:
