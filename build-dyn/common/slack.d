build-dyn/common/slack.o: common/slack.c common/fileio.h common/macro.h \
 common/slack.h
common/fileio.h:
common/macro.h:
common/slack.h:
