/* Every refusal of the loader, each with a small bad resource folder written here. Each
 * case checks the file, the line, the element and the reason in the error text. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/defs.h"
#include "defs_test_util.h"

#define ENT_CS "<root>\n<ClientServerEntities>\n<E/>\n</ClientServerEntities>\n</root>\n"
#define ENT_SO "<root>\n<ServerOnlyEntities>\n<E/>\n</ServerOnlyEntities>\n</root>\n"
/* A property block: line 2 <Properties>, 3 <p>, 4 <Type>, 5 <Flags>, then extra lines. */
#define PROP(type, flags, extra)                                                           \
    "<root>\n<Properties>\n<p>\n<Type> " type " </Type>\n<Flags> " flags " </Flags>\n" extra \
    "</p>\n</Properties>\n</root>\n"

/* Eight FIXED_DICT fields of one type, and an alias of them: each level multiplies by 8. */
#define F8(t)                                                                                \
    "<a><Type>" t "</Type></a><b><Type>" t "</Type></b><c><Type>" t "</Type></c>"            \
    "<d><Type>" t "</Type></d><e><Type>" t "</Type></e><f><Type>" t "</Type></f>"            \
    "<g><Type>" t "</Type></g><h><Type>" t "</Type></h>"
#define DICT8(name, t) "<" name "> FIXED_DICT <Properties>" F8(t) "</Properties> </" name ">\n"
#define BIG_TUPLE "TUPLE <of> INT8 </of> <size> 65535 </size>"
#define ITEMS4 "<item/><item/><item/><item/>"
#define BIG_PROP(n) "<p" n "><Type> B </Type><Flags> BASE </Flags></p" n ">\n"

typedef struct {
    const char *name;
    const char *entities;  /* NULL: ENT_CS; "" : no file */
    const char *def;       /* entity_defs/E.def; NULL: no file */
    const char *alias;     /* entity_defs/alias.xml */
    const char *iface;     /* entity_defs/interfaces/I.def */
    const char *extra_rel; /* one more file */
    const char *extra;
    const char *expect[3]; /* substrings the error must contain */
} bad_case;

static const bad_case cases[] = {
    {"python type", NULL, PROP("PYTHON", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "type PYTHON is not supported"}},
    {"user type", NULL, PROP("USER_TYPE", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "USER_TYPE is not supported"}},
    {"class type", NULL, PROP("CLASS", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "CLASS is not supported"}},
    {"kbengine entitycall", NULL, PROP("ENTITYCALL", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "write MAILBOX"}},
    {"kbengine unicode", NULL, PROP("UNICODE", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "write UNICODE_STRING"}},
    {"unknown type", NULL, PROP("WIDGET", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "unknown type 'WIDGET'"}},
    {"type two words", NULL, PROP("INT32 INT8", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "not one word"}},
    {"missing type", NULL, "<root>\n<Properties>\n<p>\n<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "needs a <Type>"}},
    {"missing flags", NULL, "<root>\n<Properties>\n<p>\n<Type> INT8 </Type>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "needs <Flags>"}},
    {"unknown flags", NULL, PROP("INT8", "EVERYONE", ""), NULL, NULL, NULL, NULL,
     {"E.def:5: <Flags>: ", "unknown flags 'EVERYONE'"}},
    {"unsupported property element", NULL, PROP("INT8", "BASE", "<DetailLevel> NEAR </DetailLevel>\n"),
     NULL, NULL, NULL, NULL, {"E.def:6: <DetailLevel>: ", "unsupported property element"}},
    {"unsupported root element", NULL, "<root>\n<LoDLevels/>\n</root>\n", NULL, NULL, NULL, NULL,
     {"E.def:2: <LoDLevels>: ", "unsupported element"}},
    {"array without of", NULL, PROP("ARRAY", "BASE", ""), NULL, NULL, NULL, NULL,
     {"E.def:4: <Type>: ", "needs an <of>"}},
    {"array persistAsBlob", NULL,
     "<root>\n<Properties>\n<p>\n<Type> ARRAY <of> INT8 </of>\n<persistAsBlob> true </persistAsBlob>\n</Type>\n<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <persistAsBlob>: ", "not supported"}},
    {"array size zero", NULL,
     "<root>\n<Properties>\n<p>\n<Type> TUPLE <of> INT8 </of>\n<size> 0 </size>\n</Type>\n<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <size>: ", "out of range"}},
    {"array unknown child", NULL,
     "<root>\n<Properties>\n<p>\n<Type> ARRAY <of> INT8 </of>\n<max> 3 </max>\n</Type>\n<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <max>: ", "unexpected element in ARRAY"}},
    {"scalar with child", NULL,
     "<root>\n<Properties>\n<p>\n<Type> INT8\n<of> INT8 </of>\n</Type>\n<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <of>: ", "unexpected element inside a INT8"}},
    {"fixed dict without properties", NULL, NULL, "<root>\n<D> FIXED_DICT\n</D>\n</root>\n", NULL,
     NULL, NULL, {"alias.xml:2: <D>: ", "needs a <Properties>"}},
    {"fixed dict empty", NULL, NULL, "<root>\n<D> FIXED_DICT\n<Properties/>\n</D>\n</root>\n", NULL,
     NULL, NULL, {"alias.xml:3: <Properties>: ", "at least one field"}},
    {"fixed dict implementedBy", NULL, NULL,
     "<root>\n<D> FIXED_DICT\n<implementedBy> mod.Conv </implementedBy>\n<Properties>\n<a> <Type> INT8 </Type> </a>\n</Properties>\n</D>\n</root>\n",
     NULL, NULL, NULL, {"alias.xml:3: <implementedBy>: ", "not supported"}},
    {"fixed dict field without type", NULL, NULL,
     "<root>\n<D> FIXED_DICT\n<Properties>\n<a/>\n</Properties>\n</D>\n</root>\n", NULL, NULL, NULL,
     {"alias.xml:4: <a>: ", "field needs a <Type>"}},
    {"fixed dict field twice", NULL, NULL,
     "<root>\n<D> FIXED_DICT\n<Properties>\n<a> <Type> INT8 </Type> </a>\n<a> <Type> INT8 </Type> </a>\n</Properties>\n</D>\n</root>\n",
     NULL, NULL, NULL, {"alias.xml:5: <a>: ", "field declared twice"}},
    {"alias cycle", NULL, NULL, "<root>\n<A> B </A>\n<B> ARRAY <of> A </of> </B>\n</root>\n", NULL,
     NULL, NULL, {"alias.xml:3: <of>: ", "alias A refers to itself"}},
    {"alias unknown", NULL, NULL, "<root>\n<A> NOPE </A>\n</root>\n", NULL, NULL, NULL,
     {"alias.xml:2: <A>: ", "unknown type 'NOPE'"}},
    {"alias twice", NULL, NULL, "<root>\n<A> INT8 </A>\n<A> INT16 </A>\n</root>\n", NULL, NULL, NULL,
     {"alias.xml:3: <A>: ", "alias declared twice"}},
    {"alias named like builtin", NULL, NULL, "<root>\n<INT8> INT16 </INT8>\n</root>\n", NULL, NULL,
     NULL, {"alias.xml:2: <INT8>: ", "named like a built-in"}},
    {"alias and types.xml", NULL, NULL, "<root/>\n", NULL, "entity_defs/types.xml", "<root/>\n",
     {"types.xml: ", "both alias.xml and types.xml"}},
    {"nesting too deep", NULL, NULL,
     "<root>\n<A1> ARRAY <of> INT8 </of> </A1>\n<A2> ARRAY <of> A1 </of> </A2>\n"
     "<A3> ARRAY <of> A2 </of> </A3>\n<A4> ARRAY <of> A3 </of> </A4>\n<A5> ARRAY <of> A4 </of> </A5>\n"
     "<A6> ARRAY <of> A5 </of> </A6>\n<A7> ARRAY <of> A6 </of> </A7>\n<A8> ARRAY <of> A7 </of> </A8>\n"
     "<A9> ARRAY <of> A8 </of> </A9>\n<A10> ARRAY <of> A9 </of> </A10>\n<A11> ARRAY <of> A10 </of> </A11>\n"
     "<A12> ARRAY <of> A11 </of> </A12>\n<A13> ARRAY <of> A12 </of> </A13>\n<A14> ARRAY <of> A13 </of> </A14>\n"
     "<A15> ARRAY <of> A14 </of> </A15>\n<A16> ARRAY <of> A15 </of> </A16>\n<A17> ARRAY <of> A16 </of> </A17>\n"
     "</root>\n",
     NULL, NULL, NULL, {"alias.xml:17: <A16>: ", "nest 17 deep, limit 16"}},
    {"duplicate property", NULL,
     "<root>\n<Properties>\n<p> <Type> INT8 </Type> <Flags> BASE </Flags> </p>\n<p> <Type> INT8 </Type> <Flags> BASE </Flags> </p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:4: <p>: ", "property declared twice (first at line 3)"}},
    {"duplicate method", NULL,
     "<root>\n<BaseMethods>\n<m/>\n<m/>\n</BaseMethods>\n</root>\n", NULL, NULL, NULL, NULL,
     {"E.def:4: <m>: ", "method declared twice"}},
    {"property clashes with interface", NULL,
     "<root>\n<Implements> <Interface> I </Interface> </Implements>\n<Properties>\n<p> <Type> INT8 </Type> <Flags> BASE </Flags> </p>\n</Properties>\n</root>\n",
     NULL, "<root>\n<Properties>\n<p> <Type> INT16 </Type> <Flags> BASE </Flags> </p>\n</Properties>\n</root>\n",
     NULL, NULL, {"E.def:4: <p>: ", "property already declared at ", "I.def:3"}},
    {"method clashes with parent", NULL,
     "<root>\n<Parent> P </Parent>\n<CellMethods>\n<m/>\n</CellMethods>\n</root>\n", NULL, NULL,
     "entity_defs/P.def", "<root>\n<CellMethods>\n<m/>\n</CellMethods>\n</root>\n",
     {"E.def:4: <m>: ", "cell method already declared at ", "P.def:3"}},
    {"parent cycle", NULL, "<root>\n<Parent> P </Parent>\n</root>\n", NULL, NULL,
     "entity_defs/P.def", "<root>\n<Parent> E </Parent>\n</root>\n",
     {"P.def:2: <Parent>: ", "E is its own ancestor"}},
    {"missing parent", NULL, "<root>\n<Parent> Ghost </Parent>\n</root>\n", NULL, NULL, NULL, NULL,
     {"E.def:2: <Parent>: ", "entity type Ghost: no file", "Ghost.def"}},
    {"missing interface", NULL,
     "<root>\n<Implements>\n<Interface> Ghost </Interface>\n</Implements>\n</root>\n", NULL, NULL,
     NULL, NULL, {"E.def:3: <Interface>: ", "interface Ghost: no file", "interfaces/Ghost.def"}},
    {"interface cycle", NULL, "<root>\n<Implements> <Interface> I </Interface> </Implements>\n</root>\n",
     NULL, "<root>\n<Implements>\n<Interface> I </Interface>\n</Implements>\n</root>\n", NULL, NULL,
     {"I.def:3: <Interface>: ", "implements itself"}},
    {"implements wrong child", NULL, "<root>\n<Implements>\n<Iface> I </Iface>\n</Implements>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <Iface>: ", "expected <Interface>"}},
    {"parent in interface", NULL, "<root>\n<Implements> <Interface> I </Interface> </Implements>\n</root>\n",
     NULL, "<root>\n<Parent> E </Parent>\n</root>\n", NULL, NULL,
     {"I.def:2: <Parent>: ", "an interface cannot have a Parent"}},
    {"volatile in interface", NULL, "<root>\n<Implements> <Interface> I </Interface> </Implements>\n</root>\n",
     NULL, "<root>\n<Volatile> <position/> </Volatile>\n</root>\n", NULL, NULL,
     {"I.def:2: <Volatile>: ", "an interface cannot declare Volatile"}},
    {"exposed client method", NULL,
     "<root>\n<ClientMethods>\n<m>\n<Exposed/>\n</m>\n</ClientMethods>\n</root>\n", NULL, NULL, NULL,
     NULL, {"E.def:4: <Exposed>: ", "client methods cannot be exposed"}},
    {"base exposed to all clients", NULL,
     "<root>\n<BaseMethods>\n<m>\n<Exposed> ALL_CLIENTS </Exposed>\n</m>\n</BaseMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:4: <Exposed>: ", "only be exposed to its own client"}},
    {"cell exposed bad value", NULL,
     "<root>\n<CellMethods>\n<m>\n<Exposed> SOMETIMES </Exposed>\n</m>\n</CellMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:4: <Exposed>: ", "OWN_CLIENT or ALL_CLIENTS"}},
    {"client method returns", NULL,
     "<root>\n<ClientMethods>\n<m>\n<ReturnValues> <r> INT8 </r> </ReturnValues>\n</m>\n</ClientMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:4: <ReturnValues>: ", "client methods cannot return"}},
    {"exposed method returns", NULL,
     "<root>\n<BaseMethods>\n<m>\n<Exposed/>\n<ReturnValues> <r> INT8 </r> </ReturnValues>\n</m>\n</BaseMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <ReturnValues>: ", "exposed method cannot return"}},
    {"empty return values", NULL,
     "<root>\n<BaseMethods>\n<m>\n<ReturnValues/>\n</m>\n</BaseMethods>\n</root>\n", NULL, NULL, NULL,
     NULL, {"E.def:4: <ReturnValues>: ", "name at least one"}},
    {"arg and args mixed", NULL,
     "<root>\n<BaseMethods>\n<m>\n<Arg> INT8 </Arg>\n<Args> <a> INT8 </a> </Args>\n</m>\n</BaseMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <Args>: ", "mixes <Arg> and <Args>"}},
    {"empty arg", NULL, "<root>\n<BaseMethods>\n<m>\n<Arg/>\n</m>\n</BaseMethods>\n</root>\n", NULL,
     NULL, NULL, NULL, {"E.def:4: <Arg>: ", "missing type name"}},
    {"argument twice", NULL,
     "<root>\n<BaseMethods>\n<m>\n<Args>\n<a> INT8 </a>\n<a> INT8 </a>\n</Args>\n</m>\n</BaseMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:6: <a>: ", "argument declared twice"}},
    {"unsupported method element", NULL,
     "<root>\n<CellMethods>\n<m>\n<DetailDistance> 10 </DetailDistance>\n</m>\n</CellMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:4: <DetailDistance>: ", "unsupported method element"}},
    {"default out of range", NULL, PROP("INT8", "BASE", "<Default> 300 </Default>\n"), NULL, NULL,
     NULL, NULL, {"E.def:6: <Default>: ", "300 is out of range for INT8"}},
    {"default not a number", NULL, PROP("UINT16", "BASE", "<Default> -1 </Default>\n"), NULL, NULL,
     NULL, NULL, {"E.def:6: <Default>: ", "not a valid UINT16 default"}},
    {"default vector short", NULL, PROP("VECTOR3", "BASE", "<Default> 1 2 </Default>\n"), NULL,
     NULL, NULL, NULL, {"E.def:6: <Default>: ", "not a valid VECTOR3 default"}},
    {"default blob not base64", NULL, PROP("BLOB", "BASE", "<Default> *** </Default>\n"), NULL,
     NULL, NULL, NULL, {"E.def:6: <Default>: ", "base64"}},
    {"default mailbox", NULL, PROP("MAILBOX", "BASE", "<Default> 1 </Default>\n"), NULL, NULL, NULL,
     NULL, {"E.def:6: <Default>: ", "a MAILBOX cannot have a default"}},
    {"default tuple wrong count", NULL,
     "<root>\n<Properties>\n<p>\n<Type> TUPLE <of> INT8 </of> <size> 2 </size> </Type>\n<Flags> BASE </Flags>\n<Default> <item> 1 </item> </Default>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:6: <Default>: ", "default has 1 items"}},
    {"default array bad item", NULL,
     "<root>\n<Properties>\n<p>\n<Type> ARRAY <of> INT8 </of> </Type>\n<Flags> BASE </Flags>\n<Default>\n<value> 1 </value>\n</Default>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:7: <value>: ", "list of <item>"}},
    {"default dict unknown field", NULL,
     "<root>\n<Properties>\n<p>\n<Type> D </Type>\n<Flags> BASE </Flags>\n<Default>\n<zz> 1 </zz>\n</Default>\n</p>\n</Properties>\n</root>\n",
     "<root>\n<D> FIXED_DICT <Properties> <a> <Type> INT8 </Type> </a> </Properties> </D>\n</root>\n",
     NULL, NULL, NULL, {"E.def:7: <zz>: ", "no such field"}},
    {"default longer than DatabaseLength", NULL,
     PROP("STRING", "BASE", "<DatabaseLength> 3 </DatabaseLength>\n<Default> abcdef </Default>\n"),
     NULL, NULL, NULL, NULL, {"E.def:7: <Default>: ", "exceeds the limit of 3"}},
    {"identifier not a string", NULL,
     PROP("INT32", "BASE", "<Persistent> true </Persistent>\n<Identifier> true </Identifier>\n"),
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "Identifier must be a STRING"}},
    {"identifier not persistent", NULL, PROP("STRING", "BASE", "<Identifier> true </Identifier>\n"),
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "Identifier must be Persistent"}},
    {"identifier on no part", NULL,
     PROP("STRING", "EDITOR_ONLY", "<Persistent> true </Persistent>\n<Identifier> true </Identifier>\n"),
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "EDITOR_ONLY property exists on no server part"}},
    {"two identifiers", NULL,
     "<root>\n<Properties>\n<a> <Type> STRING </Type> <Flags> BASE </Flags> <Persistent/> <Identifier/> </a>\n"
     "<b> <Type> STRING </Type> <Flags> BASE </Flags> <Persistent/> <Identifier/> </b>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:4: <b>: ", "more than one Identifier"}},
    {"indexed not persistent", NULL, PROP("INT32", "BASE", "<Indexed> true </Indexed>\n"), NULL, NULL,
     NULL, NULL, {"E.def:3: <p>: ", "Indexed property must be Persistent"}},
    {"database length on int", NULL, PROP("INT32", "BASE", "<DatabaseLength> 8 </DatabaseLength>\n"),
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "DatabaseLength only applies"}},
    {"database length zero", NULL, PROP("STRING", "BASE", "<DatabaseLength> 0 </DatabaseLength>\n"),
     NULL, NULL, NULL, NULL, {"E.def:6: <DatabaseLength>: ", "expected a whole number 1.."}},
    {"persistent not a bool", NULL, PROP("INT8", "BASE", "<Persistent> maybe </Persistent>\n"), NULL,
     NULL, NULL, NULL, {"E.def:6: <Persistent>: ", "expected true or false, found 'maybe'"}},
    {"persistent editor only", NULL, PROP("INT8", "EDITOR_ONLY", "<Persistent> true </Persistent>\n"),
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "EDITOR_ONLY property"}},
    {"element given twice", NULL, PROP("INT8", "BASE", "<Type> INT16 </Type>\n"), NULL, NULL, NULL,
     NULL, {"E.def:6: <Type>: ", "given twice"}},
    {"volatile unknown member", NULL, "<root>\n<Volatile>\n<scale/>\n</Volatile>\n</root>\n", NULL,
     NULL, NULL, NULL, {"E.def:3: <scale>: ", "unsupported volatile member"}},
    {"volatile bad distance", NULL, "<root>\n<Volatile>\n<yaw> far </yaw>\n</Volatile>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <yaw>: ", "a distance >= 0"}},
    {"temp property with content", NULL,
     "<root>\n<TempProperties>\n<t> <Type> INT8 </Type> </t>\n</TempProperties>\n</root>\n", NULL, NULL,
     NULL, NULL, {"E.def:3: <t>: ", "temporary property is an empty element"}},
    {"stray text", NULL, "<root>\n<Properties> oops\n</Properties>\n</root>\n", NULL, NULL, NULL, NULL,
     {"E.def:2: <Properties>: ", "unexpected text 'oops'"}},
    {"bad property name", NULL,
     "<root>\n<Properties>\n<my-prop> <Type> INT8 </Type> <Flags> BASE </Flags> </my-prop>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <my-prop>: ", "not a valid identifier"}},
    {"reserved method name", NULL, "<root>\n<BaseMethods>\n<int/>\n</BaseMethods>\n</root>\n", NULL,
     NULL, NULL, NULL, {"E.def:3: <int>: ", "reserved in generated C code"}},
    {"reserved prefix", NULL, "<root>\n<BaseMethods>\n<defc_x/>\n</BaseMethods>\n</root>\n", NULL,
     NULL, NULL, NULL, {"E.def:3: <defc_x>: ", "reserved for generated code"}},
    {"server-only client method", ENT_SO, "<root>\n<ClientMethods>\n<m/>\n</ClientMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <m>: ", "client method on E, a server-only"}},
    {"server-only exposed method", ENT_SO,
     "<root>\n<BaseMethods>\n<m> <Exposed/> </m>\n</BaseMethods>\n</root>\n", NULL, NULL, NULL, NULL,
     {"E.def:3: <m>: ", "exposed method on E, a server-only"}},
    {"server-only client property", ENT_SO, PROP("INT8", "OWN_CLIENT", ""), NULL, NULL, NULL, NULL,
     {"E.def:3: <p>: ", "flags OWN_CLIENT send it to clients"}},
    {"entity listed twice", "<root>\n<ClientServerEntities>\n<E/>\n<E/>\n</ClientServerEntities>\n</root>\n",
     "<root/>\n", NULL, NULL, NULL, NULL, {"entities.xml:4: <E>: ", "listed twice (line 3)"}},
    {"no entities.xml", "", "<root/>\n", NULL, NULL, NULL, NULL, {"entities.xml: ", "cannot open"}},
    {"no entity types", "<root>\n</root>\n", NULL, NULL, NULL, NULL, NULL,
     {"entities.xml:1: <root>: ", "lists no entity types"}},
    {"sections mixed with flat list", "<root>\n<ClientServerEntities> <E/> </ClientServerEntities>\n<F/>\n</root>\n",
     "<root/>\n", NULL, NULL, "entity_defs/F.def", "<root/>\n", {"entities.xml:1: <root>: ", "mixes"}},
    {"reserved type name", "<root>\n<game/>\n</root>\n", NULL, NULL, NULL, NULL, NULL,
     {"entities.xml:2: <game>: ", "entity type name is reserved"}},
    {"type name starting with _", "<root>\n<_E/>\n</root>\n", NULL, NULL, NULL, NULL, NULL,
     {"entities.xml:2: <_E>: ", "entity type name is reserved"}},
    {"type named game_client", "<root>\n<game_client/>\n</root>\n", NULL, NULL, NULL, NULL,
     NULL, {"entities.xml:2: <game_client>: ", "entity type name is reserved"}},
    {"return value against a mangled out_ argument", NULL,
     "<root>\n<BaseMethods>\n<m>\n<Args> <out_defc_x> INT8 </out_defc_x> </Args>\n"
     "<ReturnValues> <_x> INT8 </_x> </ReturnValues>\n</m>\n</BaseMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <_x>: ", "clashes with argument out_defc_x"}},
    {"unknown entities attribute", "<root>\n<E volatile=\"true\"/>\n</root>\n", "<root/>\n", NULL,
     NULL, NULL, NULL, {"entities.xml:2: <E>: ", "unsupported attribute volatile"}},
    {"hasClient contradicts section", "<root>\n<ServerOnlyEntities>\n<E hasClient=\"true\"/>\n</ServerOnlyEntities>\n</root>\n",
     "<root/>\n", NULL, NULL, NULL, NULL, {"entities.xml:3: <E>: ", "hasClient contradicts"}},
    {"no def file", NULL, NULL, NULL, NULL, NULL, NULL,
     {"entities.xml:3: <E>: ", "entity type E: no file", "entity_defs/E.def"}},
    {"malformed xml", NULL, "<root>\n<Properties>\n<p>\n</Properties>\n</root>\n", NULL, NULL, NULL,
     NULL, {"E.def:4: ", "malformed XML: Opening and ending tag mismatch"}},
    /* 4 KiB of aliases that would expand to 8^5 fields: refused before anything expands */
    {"alias expansion bomb", NULL, PROP("A4", "BASE", ""),
     "<root>\n" DICT8("A0", "INT8") DICT8("A1", "A0") DICT8("A2", "A1") DICT8("A3", "A2")
     DICT8("A4", "A3") "</root>\n",
     NULL, NULL, NULL, {"alias.xml:5: <A3>: ", "more than 4096 parts with aliases expanded"}},
    {"fixed size default bomb", NULL,
     PROP("TUPLE <of> " BIG_TUPLE " </of> <size> 65535 </size>", "BASE", ""), NULL, NULL, NULL,
     NULL, {"E.def:4: <Type>: ", "default value would hold more than 1048576 values"}},
    {"default items over budget", NULL,
     PROP("ARRAY <of> " BIG_TUPLE " </of>", "BASE",
          "<Default>\n" ITEMS4 ITEMS4 ITEMS4 ITEMS4 "\n<item/>\n</Default>\n"),
     NULL, NULL, NULL, NULL, {"E.def:7: <item>: ", "all properties together"}},
    {"property defaults over budget", NULL,
     "<root>\n<Properties>\n" BIG_PROP("0") BIG_PROP("1") BIG_PROP("2") BIG_PROP("3")
     BIG_PROP("4") BIG_PROP("5") BIG_PROP("6") BIG_PROP("7") BIG_PROP("8") BIG_PROP("9")
     BIG_PROP("a") BIG_PROP("b") BIG_PROP("c") BIG_PROP("d") BIG_PROP("e") BIG_PROP("f")
     BIG_PROP("g") "</Properties>\n</root>\n",
     "<root>\n<B> " BIG_TUPLE " </B>\n</root>\n", NULL, NULL, NULL,
     {"E.def:19: <pg>: ", "all properties together"}},
    /* what libxml2 parses but a def file cannot mean: refused, not skipped */
    {"attribute in def", NULL,
     "<root>\n<Properties>\n<p kind=\"x\">\n<Type> INT8 </Type>\n<Flags> BASE </Flags>\n</p>\n"
     "</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:3: <p>: ", "attribute kind is not supported"}},
    {"entity reference", NULL,
     "<!DOCTYPE root [ <!ENTITY e \"8\"> ]>\n<root>\n<Properties>\n<p>\n<Type> INT&e; </Type>\n"
     "<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <Type>: ", "entity reference &e; is not supported"}},
    {"processing instruction", NULL, NULL, "<root>\n<?x y?>\n</root>\n", NULL, NULL, NULL,
     {"alias.xml:2: <root>: ", "processing instruction <?x?> is not supported"}},
    {"attribute on entities root", "<root x=\"1\">\n<E/>\n</root>\n", "<root/>\n", NULL, NULL,
     NULL, NULL, {"entities.xml:1: <root>: ", "attribute x is not supported"}},
    {"attribute on section", "<root>\n<ClientServerEntities a=\"b\">\n<E/>\n</ClientServerEntities>\n</root>\n",
     "<root/>\n", NULL, NULL, NULL, NULL,
     {"entities.xml:2: <ClientServerEntities>: ", "attribute a is not supported"}},
    {"text in entry", "<root>\n<E> yes </E>\n</root>\n", "<root/>\n", NULL, NULL, NULL, NULL,
     {"entities.xml:2: <E>: ", "unexpected text 'yes'"}},
    {"dict default field twice", NULL,
     PROP("D", "BASE", "<Default>\n<a> 1 </a>\n<a> 2 </a>\n</Default>\n"),
     "<root>\n<D> FIXED_DICT <Properties> <a> <Type> INT8 </Type> </a> </Properties> </D>\n</root>\n",
     NULL, NULL, NULL, {"E.def:8: <a>: ", "field given twice in the default (first at line 7)"}},
    /* refusals that had no test yet */
    {"size not a number", NULL,
     "<root>\n<Properties>\n<p>\n<Type> TUPLE <of> INT8 </of>\n<size> abc </size>\n</Type>\n<Flags> BASE </Flags>\n</p>\n</Properties>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <size>: ", "expected a whole number, found 'abc'"}},
    {"fixed dict unknown child", NULL, NULL,
     "<root>\n<D> FIXED_DICT\n<Properties> <a> <Type> INT8 </Type> </a> </Properties>\n<Extra/>\n</D>\n</root>\n",
     NULL, NULL, NULL, {"alias.xml:4: <Extra>: ", "unexpected element in FIXED_DICT"}},
    {"fixed dict field length", NULL, NULL,
     "<root>\n<D> FIXED_DICT <Properties>\n<a> <Type> STRING </Type>\n<DatabaseLength> 0 </DatabaseLength> </a>\n</Properties> </D>\n</root>\n",
     NULL, NULL, NULL, {"alias.xml:4: <DatabaseLength>: ", "expected a length 1..1048576"}},
    {"fixed dict field unknown child", NULL, NULL,
     "<root>\n<D> FIXED_DICT <Properties>\n<a> <Type> INT8 </Type>\n<Default> 1 </Default> </a>\n</Properties> </D>\n</root>\n",
     NULL, NULL, NULL, {"alias.xml:4: <Default>: ", "unexpected element in a FIXED_DICT field"}},
    {"alias with child", NULL, PROP("A <of> INT8 </of>", "BASE", ""),
     "<root>\n<A> INT8 </A>\n</root>\n", NULL, NULL, NULL,
     {"E.def:4: <of>: ", "unexpected element after alias A"}},
    {"use of a bad alias", NULL, PROP("B", "BASE", ""), "<root>\n<B> PYTHON </B>\n</root>\n",
     NULL, NULL, NULL, {"E.def:4: <Type>: ", "alias B is invalid (see its error)"}},
    {"bool with child", NULL, PROP("INT8", "BASE", "<Persistent> <x/> </Persistent>\n"), NULL,
     NULL, NULL, NULL, {"E.def:6: <Persistent>: ", "expected true or false, found child elements"}},
    {"def file is a folder", NULL, NULL, NULL, NULL, "entity_defs/E.def/x", "",
     {"entity_defs/E.def: ", "not a regular file"}},
    {"entry with child", "<root>\n<E> <x/> </E>\n</root>\n", "<root/>\n", NULL, NULL, NULL, NULL,
     {"entities.xml:2: <E>: ", "an entity type entry is an empty element"}},
    {"entry twice", "<root>\n<E/>\n<E/>\n</root>\n", "<root/>\n", NULL, NULL, NULL, NULL,
     {"entities.xml:3: <E>: ", "entity type listed twice (line 2)"}},
    {"sections and flat list", "<root>\n<ServerOnlyEntities> <E/> </ServerOnlyEntities>\n<F/>\n</root>\n",
     "<root/>\n", NULL, NULL, "entity_defs/F.def", "<root/>\n",
     {"entities.xml:1: <root>: ", "mixes ClientServerEntities/ServerOnlyEntities sections"}},
    {"server-only sends to clients", ENT_SO, PROP("INT8", "ALL_CLIENTS", ""), NULL, NULL, NULL,
     NULL, {"E.def:3: <p>: ", "flags ALL_CLIENTS send it to clients, but E is a server-only"}},
    {"flags with child", NULL, PROP("INT8", "<x/>", ""), NULL, NULL, NULL, NULL,
     {"E.def:5: <Flags>: ", "expected text, found elements"}},
    {"bad interface name", NULL,
     "<root>\n<Implements>\n<Interface> 1bad </Interface>\n</Implements>\n</root>\n", NULL, NULL,
     NULL, NULL, {"E.def:3: <Interface>: ", "'1bad' is not a valid interface name"}},
    {"bad parent name", NULL, "<root>\n<Parent> 1x </Parent>\n</root>\n", NULL, NULL, NULL, NULL,
     {"E.def:2: <Parent>: ", "expected an entity type name"}},
    {"blob default not base64", NULL, PROP("BLOB", "BASE", "<Default> !!! </Default>\n"), NULL,
     NULL, NULL, NULL, {"E.def:6: <Default>: ", "BLOB default must be base64"}},
    {"default out of range", NULL, PROP("INT8", "BASE", "<Default> 300 </Default>\n"), NULL,
     NULL, NULL, NULL, {"E.def:6: <Default>: ", "bad default: 300 is out of range for INT8"}},
    {"scalar default with elements", NULL, PROP("INT8", "BASE", "<Default> <x/> </Default>\n"),
     NULL, NULL, NULL, NULL, {"E.def:6: <Default>: ", "a INT8 default is plain text"}},
    {"return named like an argument's out_ name", NULL,
     "<root>\n<BaseMethods>\n<m>\n<Args> <out_x> INT8 </out_x> </Args>\n"
     "<ReturnValues> <x> INT8 </x> </ReturnValues>\n</m>\n</BaseMethods>\n</root>\n",
     NULL, NULL, NULL, NULL, {"E.def:5: <x>: ", "return value x clashes with argument out_x"}},
    {"malformed alias xml", NULL, "<root/>\n", "<root>\n<A> INT8 </B>\n</root>\n", NULL, NULL, NULL,
     {"alias.xml:2: ", "malformed XML"}},
};

/* Write the case's files into a new directory and load it. */
static char *load_case(const bad_case *c, char **dir_out)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    const char *ent = c->entities ? c->entities : ENT_CS;
    if (*ent)
        ck_assert_int_eq(tu_write(dir, "entities.xml", ent), 0);
    if (c->def)
        ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", c->def), 0);
    else if (c->alias)
        ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", "<root/>\n"), 0);
    if (c->alias)
        ck_assert_int_eq(tu_write(dir, "entity_defs/alias.xml", c->alias), 0);
    if (c->iface)
        ck_assert_int_eq(tu_write(dir, "entity_defs/interfaces/I.def", c->iface), 0);
    if (c->extra_rel)
        ck_assert_int_eq(tu_write(dir, c->extra_rel, c->extra), 0);
    char *err = malloc(16384);
    ck_assert_ptr_nonnull(err);
    mc_entity_defs *d = mc_defs_load(dir, err, 16384);
    if (d)
        mc_defs_free(d);
    ck_assert_msg(d == NULL, "case '%s' was accepted", c->name);
    *dir_out = dir;
    return err;
}

START_TEST(refused)
{
    const bad_case *c = &cases[_i];
    char *dir;
    char *err = load_case(c, &dir);
    for (int k = 0; k < 3 && c->expect[k]; k++)
        ck_assert_msg(strstr(err, c->expect[k]) != NULL, "case '%s': expected '%s' in:\n%s",
                      c->name, c->expect[k], err);
    /* every line names a file under the resource folder */
    ck_assert_msg(strncmp(err, dir, strlen(dir)) == 0, "case '%s': error does not start with "
                  "the file: %s", c->name, err);
    free(err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Errors do not stop at the first: every one is listed, one per line. */
START_TEST(all_errors_listed)
{
    bad_case c = {"several", NULL,
                  "<root>\n<Properties>\n<a> <Type> PYTHON </Type> <Flags> BASE </Flags> </a>\n"
                  "<b> <Type> INT8 </Type> <Flags> NOBODY </Flags> </b>\n</Properties>\n"
                  "<ClientMethods>\n<m> <Exposed/> </m>\n</ClientMethods>\n<Extra/>\n</root>\n",
                  NULL, NULL, NULL, NULL, {0}};
    char *dir;
    char *err = load_case(&c, &dir);
    ck_assert_ptr_nonnull(strstr(err, "E.def:3: <Type>: type PYTHON"));
    ck_assert_ptr_nonnull(strstr(err, "E.def:4: <Flags>: unknown flags 'NOBODY'"));
    ck_assert_ptr_nonnull(strstr(err, "E.def:7: <Exposed>: client methods cannot be exposed"));
    ck_assert_ptr_nonnull(strstr(err, "E.def:9: <Extra>: unsupported element"));
    int lines = 1;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 4);
    free(err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A Parent chain E -> P1 -> ... -> Pn: 32 levels load, 33 are refused at the link that
 * goes too deep, naming its file, line and element. */
static mc_entity_defs *load_chain(int n, char *err, size_t errlen, char **dir_out)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(tu_write(dir, "entities.xml", ENT_CS), 0);
    ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", "<root>\n<Parent> P1 </Parent>\n</root>\n"), 0);
    for (int k = 1; k <= n; k++) {
        char rel[64], text[128];
        snprintf(rel, sizeof(rel), "entity_defs/P%d.def", k);
        if (k < n)
            snprintf(text, sizeof(text), "<root>\n<Parent> P%d </Parent>\n</root>\n", k + 1);
        else
            snprintf(text, sizeof(text), "<root/>\n");
        ck_assert_int_eq(tu_write(dir, rel, text), 0);
    }
    *dir_out = dir;
    return mc_defs_load(dir, err, errlen);
}

START_TEST(parent_chain_depth)
{
    char err[4096];
    char *dir;
    mc_entity_defs *d = load_chain(31, err, sizeof(err), &dir);
    ck_assert_msg(d != NULL, "32 levels refused: %s", err);
    mc_defs_free(d);
    tu_rmtree(dir);
    free(dir);
    d = load_chain(32, err, sizeof(err), &dir);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, "P31.def:2: <Parent>: Parent/Implements nest more than 32 deep"),
                  "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Entries in BigWorld's sections may carry KBEngine's attributes when they agree. */
START_TEST(section_entry_attributes)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(tu_write(dir, "entities.xml",
                              "<root>\n<ServerOnlyEntities>\n<E hasClient=\"false\" "
                              "hasCell=\"true\"/>\n</ServerOnlyEntities>\n</root>\n"),
                     0);
    ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", "<root/>\n"), 0);
    char err[4096];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    mc_defs_free(d);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* n properties p0 .. p(n-1) in E.def (line k + 3 declares pk), then pdup_of again if >= 0. */
static char *many_props(int n, int dup_of)
{
    size_t cap = (size_t)n * 64 + 256;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)snprintf(text, cap, "<root>\n<Properties>\n");
    for (int k = 0; k < n + (dup_of >= 0); k++)
        len += (size_t)snprintf(text + len, cap - len,
                                "<p%d><Type>INT8</Type><Flags>BASE</Flags></p%d>\n",
                                k < n ? k : dup_of, k < n ? k : dup_of);
    snprintf(text + len, cap - len, "</Properties>\n</root>\n");
    return text;
}

/* Duplicate checks are hashed: 65535 properties load quickly (this ran for minutes when
 * each name was compared with every earlier one), a late duplicate is still found, and
 * more than 65535 are refused at <Properties> before any is parsed. */
START_TEST(many_properties)
{
    static const struct {
        int n, dup_of;
        const char *expect;
    } runs[] = {
        {65535, -1, NULL},
        {65534, 7, "E.def:65537: <p7>: property declared twice (first at line 10)"},
        {65536, -1, "E.def:2: <Properties>: 65536 properties, at most 65535 per entity type"},
    };
    for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        char *dir = tu_mkdtemp();
        ck_assert_ptr_nonnull(dir);
        char *text = many_props(runs[r].n, runs[r].dup_of);
        ck_assert_int_eq(tu_write(dir, "entities.xml", ENT_SO), 0);
        ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", text), 0);
        free(text);
        char err[4096];
        mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
        if (!runs[r].expect) {
            ck_assert_msg(d != NULL, "%s", err);
            ck_assert_uint_eq(mc_defs_type(d, 0)->nprops, 65535);
            mc_defs_free(d);
        } else {
            ck_assert_ptr_null(d);
            ck_assert_msg(strstr(err, runs[r].expect) != NULL, "expected '%s' in: %s",
                          runs[r].expect, err);
        }
        tu_rmtree(dir);
        free(dir);
    }
}
END_TEST

/* Resolving an alias that refers to an alias not yet resolved recurses: a chain A0 = A1,
 * A1 = A2, ..., A69 = INT8 is stopped by the recursion guard with an error, not a stack
 * overflow. (Declared the other way round each alias resolves from a finished one.) */
START_TEST(alias_chain_too_long)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    char text[8192];
    size_t len = (size_t)snprintf(text, sizeof(text), "<root>\n");
    for (int k = 0; k < 69; k++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "<A%d> A%d </A%d>\n", k, k + 1, k);
    snprintf(text + len, sizeof(text) - len, "<A69> INT8 </A69>\n</root>\n");
    ck_assert_int_eq(tu_write(dir, "entities.xml", ENT_SO), 0);
    ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", "<root/>\n"), 0);
    ck_assert_int_eq(tu_write(dir, "entity_defs/alias.xml", text), 0);
    char err[8192];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, "alias.xml:") && strstr(err, ": types nest too deeply (aliases and "
                                                            "containers)"),
                  "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A def file over 16 MiB is refused by its size before libxml2 reads it. */
START_TEST(file_too_large)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(tu_write(dir, "entities.xml", ENT_SO), 0);
    ck_assert_int_eq(tu_write(dir, "entity_defs/E.def", "<root/>\n"), 0);
    char path[4096];
    snprintf(path, sizeof(path), "%s/entity_defs/E.def", dir);
    ck_assert_int_eq(truncate(path, 16 * 1024 * 1024 + 1), 0); /* sparse */
    char err[4096];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, "E.def: file too large (16777217 bytes, limit 16 MiB)"), "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Entity type ids travel in 13 bits of a mailbox: one type more is refused at the list. */
START_TEST(too_many_entity_types)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    size_t cap = (MC_ENTITY_TYPE_MAX + 1u) * 16 + 64;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)snprintf(text, cap, "<root>\n");
    for (unsigned k = 0; k <= MC_ENTITY_TYPE_MAX; k++)
        len += (size_t)snprintf(text + len, cap - len, "<T%u/>\n", k);
    snprintf(text + len, cap - len, "</root>\n");
    ck_assert_int_eq(tu_write(dir, "entities.xml", text), 0);
    free(text);
    char err[4096];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, "entities.xml:1: <root>: 8192 entity types, at most 8191 fit a "
                              "mailbox"),
                  "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_refuse");
    TCase *tc = tcase_create("refuse");
    tcase_add_loop_test(tc, refused, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, all_errors_listed);
    tcase_add_test(tc, parent_chain_depth);
    tcase_add_test(tc, section_entry_attributes);
    tcase_add_test(tc, many_properties);
    tcase_add_test(tc, alias_chain_too_long);
    tcase_add_test(tc, file_too_large);
    tcase_add_test(tc, too_many_entity_types);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
