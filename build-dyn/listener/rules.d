build-dyn/listener/rules.o: listener/rules.c \
 /usr/include/libevdev-1.0/libevdev/libevdev.h common/ini-file.h \
 common/macro.h listener/rules.h common/time-util.h common/strv.h \
 common/unit-name.h
/usr/include/libevdev-1.0/libevdev/libevdev.h:
common/ini-file.h:
common/macro.h:
listener/rules.h:
common/time-util.h:
common/strv.h:
common/unit-name.h:
