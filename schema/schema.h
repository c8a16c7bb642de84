/* schema.h - the numbered SQL migrations, compiled in from schema/NNN_*.sql.
 * schema_migrations[i] is migration number i+1; PRAGMA user_version holds
 * the number of migrations applied. */
#ifndef GPUD_SCHEMA_H
#define GPUD_SCHEMA_H

extern const char *const schema_migrations[];
extern const int schema_migration_count;

#endif
